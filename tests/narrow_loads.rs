//! Zero extensions of narrow loads (`lower::select::values`, `Lowerer::zero_extended`): a
//! `u8`/`u16` load is an unsigned `LD*.U8`/`.U16`, which zero-extends into its register, so
//! reading it into a 32-bit register or widening it with `cvt.u32.u16` costs no `LOP32I.AND`,
//! as in ptxas 11.8; a zero extension of a zero extension is one mask. A narrow load read only
//! by sign extensions is loaded signed (`LD*.S8`/`.S16`, `Lowerer::signed_load`), no `BFE`. Data:
//! `tests/data/narrow/zext_loads.ptx` (its opening comment says what it pins).

#[path = "common/frame_ir.rs"]
#[allow(dead_code)] // narrow_loads uses part of the shared helpers
mod frame_ir;

use leafold::driver::{compile, Emit};

/// The `LOP32I.AND` lines of `sass` with the mask `imm` (e.g. `0xff`).
fn masks<'s>(sass: &'s str, imm: &str) -> Vec<&'s str> {
    sass.lines()
        .filter(|l| l.contains("LOP32I.AND") && l.contains(&format!(", {imm} ;")))
        .collect()
}

#[test]
fn narrow_loads_are_not_masked_again() {
    let file = "zext_loads.ptx";
    let ptx = frame_ir::read("narrow", file);
    let sass = compile(&ptx, &frame_ir::options(file, Emit::Sass))
        .unwrap()
        .text;
    // The three loads are used as they are; `cvt.u16.u8` of the u16 load masks (0xff), and
    // its `cvt.u32.u16` does not mask again (0xffff); `and x, 255` is the other 0xff, and its
    // truncation widened again costs nothing. ptxas 11.8: the same two masks (one of them in
    // a LOP3 with the `xor`).
    assert_eq!(masks(&sass, "0xff").len(), 2, "{sass}");
    assert!(masks(&sass, "0xffff").is_empty(), "{sass}");
    // The signed loads sign-extend themselves: no BFE.
    assert!(!sass.contains("BFE"), "{sass}");
    for load in ["LDG.E.U8", "LDS.U.U8", "LDG.E.U16", "LDG.E.S8", "LDG.E.S16"] {
        assert!(sass.contains(load), "{load}:\n{sass}");
    }
    // The loaded bytes and halves stored as 32-bit words: eval (zero-extended by the IR's
    // `zext`) equals the simulator running the code without the masks, on random inputs.
    frame_ir::assert_eval_matches_sim("narrow", file);
}
