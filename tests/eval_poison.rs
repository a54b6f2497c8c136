//! `Launch::undefined_registers` (`ir::eval`'s `poison.rs`): values computed from a register
//! no definition reaches are tracked into shared memory, so `verify` does not compare bytes
//! whose contents are whatever a physical register held (CUB's downsweep stores the keys of
//! out-of-range items that way; ptxas's code stores garbage where the reference stores 0).

use leafold::ir::eval::{run, GlobalRegion, Launch};
use leafold::ir::{self, Module};
use leafold::{ptx, SourceFile};

const OUT: u64 = 0x1000_0000;

fn module(body: &str) -> Module {
    let text = format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<4>;\n\
         .shared .align 4 .b8 sh[24];\n\
         ld.param.u64 %rd1, [out];\n{body}\n\
         ret;\n}}\n"
    );
    let file = SourceFile::new("p.ptx", text);
    let (ast, _) = ptx::parse_and_check(&file).unwrap();
    ir::build(&ast, &file).unwrap()
}

/// Shared bytes marked undefined at the end of the one CTA (one thread), word by word.
fn undefined_words(body: &str, track: bool) -> Option<Vec<bool>> {
    let m = module(body);
    let mut l = Launch::new([1, 1, 1], [1, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 16],
    }];
    l.undefined_registers = track;
    let out = run(&m, "k", &l).expect("runs");
    let cta = out.shared_undefined.first()?;
    // The variable's 24 bytes (the CTA's shared memory is padded to 16).
    Some(cta[..24].chunks(4).map(|w| w.iter().all(|&b| b)).collect())
}

/// Word 0: an undefined register plus one; word 1: a constant; word 2: word 0 read back
/// (undefined through memory); word 3: undefined, then overwritten with a defined value;
/// word 4: a value defined on one path only, joined at a block parameter; word 5: a
/// `select` of a defined and an undefined value (undefined when it picks the undefined one).
const BODY: &str = "
    add.s32 %r2, %r9, 1;
    st.shared.u32 [sh], %r2;
    mov.u32 %r3, 7;
    st.shared.u32 [sh+4], %r3;
    ld.shared.u32 %r4, [sh];
    st.shared.u32 [sh+8], %r4;
    st.shared.u32 [sh+12], %r9;
    mov.u32 %r5, 9;
    st.shared.u32 [sh+12], %r5;
    mov.u32 %r6, %tid.x;
    setp.eq.u32 %p1, %r6, 5;
    @%p1 bra SKIP;
    mov.u32 %r10, 3;
SKIP:
    st.shared.u32 [sh+16], %r10;
    selp.u32 %r7, %r3, %r11, %p1;
    st.shared.u32 [sh+20], %r7;
    st.global.u32 [%rd1], %r4;";

#[test]
fn stores_from_undefined_registers_mark_shared_bytes() {
    // Thread 0 takes the path that defines %r10, so word 4 is defined.
    assert_eq!(
        undefined_words(BODY, true).unwrap(),
        [true, false, true, false, false, true]
    );
}

#[test]
fn a_path_without_a_definition_is_undefined_at_the_join() {
    // With the branch always taken, %r10 reaches the store undefined.
    let body = BODY.replace("setp.eq.u32 %p1, %r6, 5", "setp.eq.u32 %p1, %r6, 0");
    // The select now picks the defined %r3.
    assert_eq!(
        undefined_words(&body, true).unwrap(),
        [true, false, true, false, true, false]
    );
}

#[test]
fn nothing_is_tracked_unless_the_launch_asks() {
    assert_eq!(undefined_words(BODY, false), None);
}
