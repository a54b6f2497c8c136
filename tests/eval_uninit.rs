//! `Launch::undefined_uninit`: with it, `ir::eval` calls a read of shared or local bytes that
//! no store wrote (PTX gives `.shared` and `.local` variables no initializers) undefined (a GPU leaves them as they were: the hardware
//! check in `examples/hwcheck_export.rs` found 2,352 generated kernels whose results depended
//! on it); without it (the default, `verify`'s setting) such bytes read as zero on both of
//! verify's sides.

use leafold::ir::eval::{run, EvalError, GlobalRegion, Launch};
use leafold::ir::{self, Module};
use leafold::{ptx, SourceFile};

const OUT: u64 = 0x1000_0000;

fn module(body: &str) -> Module {
    let text = format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b32 %r<8>; .reg .b64 %rd<8>;\n\
         .shared .align 4 .b8 sh[64];\n\
         .local .align 4 .b8 lc[16];\n\
         ld.param.u64 %rd1, [out];\n{body}\n\
         st.global.u32 [%rd1], %r1;\nret;\n}}\n"
    );
    let file = SourceFile::new("u.ptx", text);
    let (ast, _) = ptx::parse_and_check(&file).unwrap();
    ir::build(&ast, &file).unwrap()
}

fn go(body: &str, strict: bool) -> Result<u32, EvalError> {
    let m = module(body);
    let mut l = Launch::new([1, 1, 1], [2, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 16],
    }];
    l.undefined_uninit = strict;
    let out = run(&m, "k", &l)?;
    let b = out.region(OUT).unwrap();
    Ok(u32::from_le_bytes(b[..4].try_into().unwrap()))
}

fn is_undefined(r: Result<u32, EvalError>) -> bool {
    matches!(r, Err(EvalError::Undefined { ref why, .. }) if why.contains("nothing wrote"))
}

#[test]
fn unwritten_shared_and_local_bytes_are_undefined_only_when_asked() {
    let shared = "ld.shared.u32 %r1, [sh+8];";
    assert_eq!(go(shared, false).unwrap(), 0);
    assert!(is_undefined(go(shared, true)));
    let local = "ld.local.u32 %r1, [lc+4];";
    assert_eq!(go(local, false).unwrap(), 0);
    assert!(is_undefined(go(local, true)));
    // Half written is still undefined: one byte of the word was never stored.
    let partial = "mov.u32 %r2, 5; st.local.u16 [lc], %r2; st.local.u8 [lc+2], %r2;\n\
                   ld.local.u32 %r1, [lc];";
    assert!(is_undefined(go(partial, true)));
}

#[test]
fn stored_and_initialized_bytes_are_defined() {
    let stored = "mov.u32 %r2, 0x01020304; st.local.u32 [lc+4], %r2; ld.local.u32 %r1, [lc+4];";
    assert_eq!(go(stored, true).unwrap(), 0x0102_0304);
    // Bytes written through a generic address count too.
    let generic = "mov.u64 %rd2, lc; cvta.local.u64 %rd3, %rd2; mov.u32 %r2, 11;\n\
                   st.u32 [%rd3+8], %r2; ld.local.u32 %r1, [lc+8];";
    assert_eq!(go(generic, true).unwrap(), 11);
    // Each thread stores its own shared word; thread 0 reads back its own.
    let own = "mov.u32 %r3, %tid.x; mul.wide.u32 %rd4, %r3, 4; mov.u64 %rd5, sh;\n\
               add.u64 %rd6, %rd5, %rd4; add.u32 %r2, %r3, 40; st.shared.u32 [%rd6], %r2;\n\
               ld.shared.u32 %r1, [%rd6];";
    // Both threads store to `out`: thread 1's value (41) lands last.
    assert_eq!(go(own, true).unwrap(), 41);
}
