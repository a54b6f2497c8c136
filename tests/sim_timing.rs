//! `sim::run_timed`, the dynamic figures of `leafold compare`: warp-instructions executed and
//! issue cycles, checked on kernels whose counts are known from their shape.
//!
//! * A loop with a trip count fixed by a parameter executes its body that many times and
//!   everything else once: warp-instructions = straight part + trips × body, per warp.
//! * A branch-free kernel walks its code once per warp in layout order, exactly as the static
//!   model (`sm50::sched::cost::cycles`) walks it: dynamic cycles = warps × static cycles.
//! * A barrier holds every warp until the last one arrives.

use leafold::driver::{compile, Options};
use leafold::ir::eval::{GlobalRegion, Launch};
use leafold::sim;
use leafold::sm50::sched::check::decode_text;
use leafold::sm50::sched::cost;
use leafold::sm50::Form;

const OUT: u64 = 0x1000_0000;

fn code_of(src: &str) -> (Vec<u64>, sim::KernelInfo) {
    let out = compile(src, &Options::default())
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    sim::load_kernel(&out.cubin, "k").unwrap()
}

fn launch(threads: u32, trips: u32) -> Launch {
    let mut l = Launch::new([1, 1, 1], [threads, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.params.extend(trips.to_le_bytes());
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 4 * threads as usize],
    }];
    l
}

const LOOP: &str = r#"
.version 7.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
L:
    mad.lo.u32 %r4, %r4, 3, %r2;
    xor.b32 %r4, %r4, %r3;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, %r1;
    @%p1 bra L;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"#;

#[test]
fn a_loop_counts_its_body_once_per_trip() {
    let (code, info) = code_of(LOOP);
    let (insts, _, targets) = decode_text(&code).unwrap();
    // The one backward branch closes the loop; everything up to the EXIT runs once.
    let (bra, head) = insts
        .iter()
        .enumerate()
        .find_map(|(k, i)| {
            let t = targets[k]?;
            (i.form == Form::BRA && t <= k).then_some((k, t))
        })
        .expect("a loop");
    let exit = insts.iter().position(|i| i.form == Form::EXIT).unwrap();
    assert!(
        exit > bra,
        "one EXIT after the loop; nothing is skipped on the way"
    );
    let body = (bra - head + 1) as u64;
    let straight = (exit + 1) as u64 - body;
    for (threads, trips) in [(32u32, 1u32), (32, 10), (64, 7), (96, 25)] {
        let warps = u64::from(threads.div_ceil(32));
        let (_, t) = sim::run_timed(&code, &info, &launch(threads, trips)).unwrap();
        assert_eq!(
            t.warp_insts,
            warps * (straight + u64::from(trips) * body),
            "{threads} threads, {trips} trips"
        );
        assert!(t.issue_cycles >= t.warp_insts, "at least a cycle each");
    }
    // Cycles grow with the trips, by the same amount per trip.
    let cycles = |trips| {
        sim::run_timed(&code, &info, &launch(32, trips))
            .unwrap()
            .1
            .issue_cycles
    };
    let (c10, c20, c30) = (cycles(10), cycles(20), cycles(30));
    assert!(c20 > c10 && c30 - c20 == c20 - c10, "{c10} {c20} {c30}");
}

const STRAIGHT: &str = r#"
.version 7.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .b32 %r<8>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r3, [%rd3];
    mul.lo.u32 %r4, %r3, %r1;
    add.u32 %r4, %r4, %r2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"#;

#[test]
fn straight_code_costs_the_static_walk_per_warp() {
    let (code, info) = code_of(STRAIGHT);
    let (insts, ctrl, _) = decode_text(&code).unwrap();
    let exit = insts.iter().position(|i| i.form == Form::EXIT).unwrap();
    let walk = cost::cycles(&insts[..=exit], &ctrl[..=exit]);
    for threads in [1u32, 32, 64, 128] {
        let warps = u64::from(threads.div_ceil(32));
        let (_, t) = sim::run_timed(&code, &info, &launch(threads, 3)).unwrap();
        assert_eq!(t.warp_insts, warps * (exit as u64 + 1));
        assert_eq!(t.issue_cycles, warps * walk, "{threads} threads");
    }
}

const BARRIER: &str = r#"
.version 7.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
    .shared .align 4 .b32 s[64];
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, 0;
    setp.ge.u32 %p1, %r2, 32;
    @%p1 bra JOIN;
L:
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, %r1;
    @%p1 bra L;
JOIN:
    shl.b32 %r4, %r2, 2;
    mov.u32 %r5, s;
    add.u32 %r5, %r5, %r4;
    st.shared.u32 [%r5], %r3;
    bar.sync 0;
    ld.shared.u32 %r6, [s];
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;
}
"#;

#[test]
fn a_barrier_waits_for_the_slowest_warp() {
    let (code, info) = code_of(BARRIER);
    // Warp 0 loops, warp 1 does not. At the barrier warp 1 waits for warp 0, so after it
    // both finish the same code at the same time: the run costs about twice warp 0's clock,
    // whatever the trip count; without the wait warp 1 would add almost nothing per trip.
    let run = |trips| sim::run_timed(&code, &info, &launch(64, trips)).unwrap().1;
    let (a, b) = (run(10), run(110));
    let per_trip_both = (b.issue_cycles - a.issue_cycles) as f64 / 100.0;
    let insts_per_trip = (b.warp_insts - a.warp_insts) as f64 / 100.0;
    // Only warp 0 executes the extra trips...
    assert!((2.0..10.0).contains(&insts_per_trip), "{insts_per_trip}");
    // ...but both warps' clocks advance by them.
    let one = sim::run_timed(&code, &info, &launch(32, 110)).unwrap().1;
    let one_a = sim::run_timed(&code, &info, &launch(32, 10)).unwrap().1;
    let per_trip_one = (one.issue_cycles - one_a.issue_cycles) as f64 / 100.0;
    assert!(
        (per_trip_both - 2.0 * per_trip_one).abs() < 0.5,
        "two warps {per_trip_both} per trip, one warp {per_trip_one}"
    );
}
