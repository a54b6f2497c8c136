//! One negative test per diagnostic: the exact rendered message, source line and caret.
//! Every case is a complete small PTX file; `render` returns all diagnostics of
//! `parse_and_check` (or the warnings of a clean file) rendered the way `leafold check` prints
//! them.

use leafold::error::render_all;
use leafold::ptx;
use leafold::SourceFile;

fn render(src: &str) -> (String, bool) {
    let file = SourceFile::new("t.ptx", src);
    match ptx::parse_and_check(&file) {
        Ok((_, warnings)) => (render_all(&warnings), false),
        Err(d) => (render_all(&d.0), true),
    }
}

fn expect_error(src: &str, expected: &str) {
    let (got, is_err) = render(src);
    assert!(is_err, "expected an error, got none; output:\n{got}");
    assert_eq!(got, expected);
}

#[test]
fn deep_nesting_is_one_error_not_a_stack_overflow() {
    let src = format!(
        ".version 7.0\n.target sm_50\n.entry k()\n{}{}\n",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    let (got, is_err) = render(&src);
    assert!(is_err);
    let first = got.lines().next().unwrap();
    assert_eq!(
        first,
        "t.ptx:4:129: error: nesting too deep (more than 128 levels)"
    );
    assert_eq!(
        got.matches("error:").count(),
        1,
        "no follow-on errors: {first}"
    );
    // The same for initializers, parentheses and `!` chains.
    for deep in [
        format!(
            ".global .u32 x[1] = {}1{};",
            "{".repeat(5000),
            "}".repeat(5000)
        ),
        format!(
            ".global .u32 x = {}1{};",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
        format!(".global .u32 x = {}1;", "-".repeat(5000)),
    ] {
        let (got, is_err) = render(&deep);
        assert!(is_err);
        assert!(
            got.contains("nesting too deep (more than 128 levels)"),
            "{got}"
        );
    }
}

#[test]
fn align() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.global .align 3 .u32 x;\n",
        "t.ptx:4:1: error: alignment 3 is not a power of two\n4 | .global .align 3 .u32 x;\n  | ^^^^^^^^^^^^^^^^^^^^^^^^\n",
    );
}

#[test]
fn bad_char() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\tret; #\n}\n",
        "t.ptx:6:7: error: unexpected character '#'\n6 |  ret; #\n  |       ^\n",
    );
}

#[test]
fn bad_float() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .f32 %f1;\n\tmov.f32 %f1, 0f3F80;\n\tret;\n}\n",
        "t.ptx:7:15: error: malformed float constant '0f3F80': expected 0f followed by 8 hex digits\n7 |  mov.f32 %f1, 0f3F80;\n  |               ^^^^^^\n",
    );
}

#[test]
fn bad_initializer() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.global .u32 tbl[2] = {1, 2, 3};\n",
        "t.ptx:4:23: error: bad initializer: 3 elements for an array of 2\n4 | .global .u32 tbl[2] = {1, 2, 3};\n  |                       ^^^^^^^^^\n",
    );
}

#[test]
fn duplicate() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 a;\n\t.reg .f32 a;\n\tret;\n}\n",
        "t.ptx:7:12: error: duplicate declaration of 'a'\n7 |  .reg .f32 a;\n  |            ^\n",
    );
}

#[test]
fn empty_addr() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 %r1;\n\tld.global.u32 %r1, [];\n\tret;\n}\n",
        "t.ptx:7:22: error: malformed address: empty brackets\n7 |  ld.global.u32 %r1, [];\n  |                      ^\n",
    );
}

#[test]
fn guard_not_pred() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 %r1;\n\t@%r1 bra L;\nL:\n\tret;\n}\n",
        "t.ptx:7:3: error: guard '%r1' is not a predicate register (declared .u32)\n7 |  @%r1 bra L;\n  |   ^^^\n",
    );
}

#[test]
fn int_overflow() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.global .u64 big = 99999999999999999999;\n",
        "t.ptx:4:20: error: integer constant '99999999999999999999' does not fit in 64 bits\n4 | .global .u64 big = 99999999999999999999;\n  |                    ^^^^^^^^^^^^^^^^^^^^\n",
    );
}

#[test]
fn malformed_address() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k(.param .u64 p)\n{\n\t.reg .u64 %rd<4>;\n\tld.global.u64 %rd1, [%rd2+%rd3];\n\tret;\n}\n",
        "t.ptx:7:28: error: malformed address: the offset must be a constant (only [reg+imm] is allowed)\n7 |  ld.global.u64 %rd1, [%rd2+%rd3];\n  |                            ^^^^\n",
    );
}

#[test]
fn operand_count() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 %r<4>;\n\tadd.u32 %r1, %r2;\n\tret;\n}\n",
        "t.ptx:7:10: error: 'add' takes 3 operands, found 2\n7 |  add.u32 %r1, %r2;\n  |          ^^^^^^^^\n",
    );
}

#[test]
fn pred_space() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.global .pred p;\n",
        "t.ptx:4:1: error: predicate variables may only be declared in the .reg state space\n4 | .global .pred p;\n  | ^^^^^^^^^^^^^^^^\n",
    );
}

#[test]
fn space_mismatch() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.shared .u32 s;\n.entry k()\n{\n\t.reg .u32 %r1;\n\tld.global.u32 %r1, [s];\n\tret;\n}\n",
        "t.ptx:8:22: error: state space mismatch: 's' is declared .shared but 'ld.global.u32' accesses .global\n8 |  ld.global.u32 %r1, [s];\n  |                      ^\n",
    );
}

#[test]
fn st_const() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.const .u32 c;\n.entry k()\n{\n\t.reg .u32 %r1;\n\tst.const.u32 [c], %r1;\n\tret;\n}\n",
        "t.ptx:8:2: error: 'st' cannot write to the .const state space\n8 |  st.const.u32 [c], %r1;\n  |  ^^\n",
    );
}

#[test]
fn target_warning() {
    let (got, is_err) =
        render(".version 7.0\n.target sm_70\n.address_size 64\n.entry k()\n{\n\tret;\n}\n");
    assert!(!is_err);
    assert_eq!(got, "t.ptx:2:9: warning: target 'sm_70' is newer than sm_53; leafold generates code for sm_50, sm_52 and sm_53 only\n2 | .target sm_70\n  |         ^^^^^\n");
}

#[test]
fn type_mismatch() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 %r<4>;\n\t.reg .f32 %f<4>;\n\tadd.f32 %f1, %f2, %r3;\n\tret;\n}\n",
        "t.ptx:8:20: error: type mismatch: '%r3' is .u32 but 'add.f32' expects .f32\n8 |  add.f32 %f1, %f2, %r3;\n  |                    ^^^\n",
    );
}

#[test]
fn unclosed() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\tret;\n",
        "t.ptx:5:1: error: unclosed '{': missing '}'\n5 | {\n  | ^\n",
    );
}

#[test]
fn undeclared() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 %r<4>;\n\tadd.u32 %r9, %r1, 1;\n\tret;\n}\n",
        "t.ptx:7:10: error: undeclared identifier '%r9'\n7 |  add.u32 %r9, %r1, 1;\n  |          ^^^\n",
    );
}

#[test]
fn undeclared_label() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\tbra NOWHERE;\n}\n",
        "t.ptx:6:6: error: undeclared label 'NOWHERE'\n6 |  bra NOWHERE;\n  |      ^^^^^^^\n",
    );
}

#[test]
fn unknown_modifier() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 %r<4>;\n\tadd.foo.u32 %r1, %r2, %r3;\n\tret;\n}\n",
        "t.ptx:7:5: error: unknown modifier '.foo' for 'add'\n7 |  add.foo.u32 %r1, %r2, %r3;\n  |     ^^^^\n",
    );
}

#[test]
fn unknown_opcode() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.reg .u32 %r<4>;\n\tfrob.u32 %r1, %r2;\n\tret;\n}\n",
        "t.ptx:7:2: error: unknown opcode 'frob'\n7 |  frob.u32 %r1, %r2;\n  |  ^^^^\n",
    );
}

#[test]
fn vector_too_wide() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.global .v4 .f64 v;\n",
        "t.ptx:4:1: error: vector .v4 .f64 is 256 bits; vectors cannot exceed 128 bits\n4 | .global .v4 .f64 v;\n  | ^^^^^^^^^^^^^^^^^^^\n",
    );
}

#[test]
fn store_without_address() {
    expect_error(
        ".version 7.0\n.target sm_50\n.entry k()\n{\n\t.reg .u32 %r<3>;\n\tst.global.u32 %r1, %r2;\n}\n",
        "t.ptx:6:16: error: malformed address: operand 1 of 'st' must be an address such as [reg] or [var+imm]\n6 |  st.global.u32 %r1, %r2;\n  |                ^^^\n",
    );
}

#[test]
fn label_used_as_data() {
    expect_error(
        ".version 7.0\n.target sm_50\n.entry k()\n{\n\t.reg .u32 %r1;\nL:\n\tadd.u32 %r1, %r1, L;\n\tret;\n}\n",
        "t.ptx:7:20: error: label 'L' can only be used by branch and call instructions\n7 |  add.u32 %r1, %r1, L;\n  |                    ^\n",
    );
}

#[test]
fn float_constant_for_integer_instruction() {
    expect_error(
        ".version 7.0\n.target sm_50\n.entry k()\n{\n\t.reg .u32 %r1;\n\tadd.u32 %r1, %r1, 1.5;\n\tret;\n}\n",
        "t.ptx:6:20: error: type mismatch: floating-point constant where 'add.u32' expects .u32\n6 |  add.u32 %r1, %r1, 1.5;\n  |                    ^^^\n",
    );
}

#[test]
fn minus_offset_in_address() {
    expect_error(
        ".version 7.0\n.target sm_50\n.entry k()\n{\n\t.reg .u32 %r<3>;\n\tld.local.u32 %r1, [%r2-8];\n}\n",
        "t.ptx:6:24: error: malformed address: a negative offset is written [reg+-imm], not [reg-imm]\n6 |  ld.local.u32 %r1, [%r2-8];\n  |                        ^\n",
    );
}

#[test]
fn immediate_address_outside_local() {
    expect_error(
        ".version 7.0\n.target sm_50\n.entry k()\n{\n\t.reg .u32 %r1;\n\tld.global.u32 %r1, [256];\n\tret;\n}\n",
        "t.ptx:6:21: error: malformed address: immediate addresses are only allowed for .local\n6 |  ld.global.u32 %r1, [256];\n  |                     ^^^^^\n",
    );
}

#[test]
fn call_with_wrong_argument_count() {
    expect_error(
        ".version 7.0\n.target sm_50\n.func (.param .b32 r) f (.param .b32 a, .param .b32 b)\n{\n\tret;\n}\n.entry k()\n{\n\t.param .b32 x;\n\tcall (x), f, (x);\n\tret;\n}\n",
        "t.ptx:10:12: error: call to 'f' passes 1 argument(s), but it takes 2\n10 |  call (x), f, (x);\n   |            ^\n",
    );
}

#[test]
fn declared_function_never_defined() {
    expect_error(
        ".version 7.0\n.target sm_50\n.func g ();\n",
        "t.ptx:3:7: error: function 'g' is declared but never defined (declare it .extern if it lives elsewhere)\n3 | .func g ();\n  |       ^\n",
    );
}

/// A kernel declaring registers of every shape, with `line` as its only instruction (line 10).
fn typed_kernel(line: &str) -> String {
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{{\n\t.reg .u32 %r<4>;\n\t.reg .u64 %rd<4>;\n\t.reg .pred %p<3>;\n\t.reg .f32 %f<3>;\n\t{line}\n\tret;\n}}\n"
    )
}

/// `line` is rejected with exactly one type-mismatch error on `operand` (its first occurrence
/// after the opcode), which is declared `.decl` where the instruction wants `.want`.
fn expect_mismatch(line: &str, operand: &str, decl: &str, want: &str) {
    let opcode = line.split_whitespace().next().unwrap();
    let after = line.find(' ').unwrap();
    let col = 2 + after + line[after..].find(operand).unwrap();
    let caret = format!("{}{}", " ".repeat(col), "^".repeat(operand.len()));
    let expected = format!(
        "t.ptx:10:{col}: error: type mismatch: '{operand}' is .{decl} but '{opcode}' expects .{want}\n10 |  {line}\n   |{caret}\n"
    );
    expect_error(&typed_kernel(line), &expected);
}

fn expect_clean(line: &str) {
    let (got, is_err) = render(&typed_kernel(line));
    assert!(!is_err, "`{line}` was rejected:\n{got}");
}

/// The operand typing rules of opcodes whose operands do not all share the instruction type
/// (seeds §6.1: operand types must be compatible with the instruction type).
#[test]
fn operand_types_of_mixed_type_opcodes() {
    // atom/red: every non-address operand has the instruction type.
    expect_mismatch("atom.global.add.u32 %r1, [%rd1], %f1;", "%f1", "f32", "u32");
    expect_mismatch("red.global.add.u64 [%rd1], %f1;", "%f1", "f32", "u64");
    expect_clean("atom.global.cas.b32 %r1, [%rd1], %r2, %r3;");
    // bfe: d, a typed; b, c .u32.
    expect_mismatch("bfe.u32 %r1, %r2, %rd1, 8;", "%rd1", "u64", "u32");
    expect_mismatch("bfe.u64 %r1, %rd2, 0, 8;", "%r1", "u32", "u64");
    expect_clean("bfe.s64 %rd1, %rd2, %r1, %r2;");
    // bfi: f, a, b typed; c, d .u32.
    expect_mismatch("bfi.b64 %rd1, %rd2, %rd3, %r1, %rd0;", "%rd0", "u64", "u32");
    expect_clean("bfi.b64 %rd1, %rd2, %rd3, %r1, 4;");
    // clz/popc/bfind: d .u32 whatever a's width.
    expect_mismatch("clz.b64 %rd1, %rd2;", "%rd1", "u64", "u32");
    expect_mismatch("popc.b32 %r1, %rd2;", "%rd2", "u64", "b32");
    expect_clean("bfind.u64 %r1, %rd2;");
    // testp: p predicate, a typed.
    expect_mismatch("testp.finite.f32 %r1, %f1;", "%r1", "u32", "pred");
    expect_clean("testp.notanumber.f32 %p1, %f1;");
    // vote: d typed (.pred or .b32), a predicate, membermask .u32.
    expect_mismatch("vote.ballot.b32 %r1, %r2;", "%r2", "u32", "pred");
    expect_mismatch("vote.sync.all.pred %p1, %p2, %rd1;", "%rd1", "u64", "u32");
    expect_clean("vote.sync.ballot.b32 %r1, !%p1, 0xffffffff;");
    // shfl: d, a typed; optional |p predicate; b, c, membermask .u32.
    expect_mismatch(
        "shfl.sync.bfly.b32 %r1|%r2, %r3, 1, 31, -1;",
        "%r2",
        "u32",
        "pred",
    );
    expect_mismatch("shfl.down.b32 %r1, %rd1, 1, 31;", "%rd1", "u64", "b32");
    expect_clean("shfl.sync.idx.b32 %r1|%p1, %f1, %r2, 31, 0xffffffff;");
    // isspacep: p predicate.
    expect_mismatch("isspacep.shared %r1, %rd1;", "%r1", "u32", "pred");
    expect_clean("isspacep.global %p1, %rd1;");
    // slct: d, a, b first type, c second type.
    expect_mismatch("slct.u32.s32 %r1, %r2, %r3, %f1;", "%f1", "f32", "s32");
    expect_clean("slct.f32.f32 %f1, %f2, %f1, %f2;");
    // cvta, prmt, shf: all operands typed.
    expect_mismatch("cvta.to.global.u64 %rd1, %r1;", "%r1", "u32", "u64");
    expect_mismatch("prmt.b32 %r1, %r2, %rd3, 0x3210;", "%rd3", "u64", "b32");
    expect_mismatch("shf.l.wrap.b32 %r1, %r2, %r3, %rd1;", "%rd1", "u64", "b32");
    // dp4a: 32-bit registers.
    expect_mismatch("dp4a.u32.u32 %r1, %r2, %rd1, %r3;", "%rd1", "u64", "b32");
    // bar: ids and counts .u32; bar.red a predicate last.
    expect_mismatch("bar.sync %rd1;", "%rd1", "u64", "u32");
    expect_mismatch("bar.red.popc.u32 %r1, 0, %r2;", "%r2", "u32", "pred");
    expect_clean("bar.red.and.pred %p1, 0, !%p2;");
    // Video instructions: d and c the first type, a the second, b the third.
    expect_mismatch("vadd.u32.u32.u32 %r1, %r2, %rd1;", "%rd1", "u64", "u32");
}

/// A kernel header line in a complete file (the header is line 4).
fn kernel_with(header: &str) -> String {
    format!(".version 7.0\n.target sm_50\n.address_size 64\n{header}\n{{\n\tret;\n}}\n")
}

/// The directives ptxas 11.8 refuses get a located error with ptxas's meaning (its words in
/// the comments).
#[test]
fn performance_directives_ptxas_refuses() {
    // "Positive non-zero value expected for maxnreg" (and the others).
    for (d, col) in [
        (".maxnreg 0", 12),
        (".maxntid 0", 12),
        (".maxntid 64, 0", 12),
        (".reqntid 0", 12),
        (".minnctapersm 0", 12),
    ] {
        let name = d.split(' ').next().unwrap();
        let caret = format!("{}{}", " ".repeat(col - 1), "^".repeat(d.len()));
        expect_error(
            &kernel_with(&format!(".entry k() {d}")),
            &format!(
                "t.ptx:4:{col}: error: positive non-zero value expected for '{name}'\n4 | .entry k() {d}\n  | {caret}\n"
            ),
        );
    }
    // "Parsing error near ','": at most three sizes.
    expect_error(
        &kernel_with(".entry k() .reqntid 1,2,3,4"),
        "t.ptx:4:12: error: '.reqntid' takes at most three sizes (x, y, z), not 4\n4 | .entry k() .reqntid 1,2,3,4\n  |            ^^^^^^^^^^^^^^^^\n",
    );
    // "Conflicting directives: .maxntid and .reqntid cannot both be specified" (even equal).
    expect_error(
        &kernel_with(".entry k() .maxntid 64 .reqntid 64"),
        "t.ptx:4:24: error: conflicting directives: '.maxntid' and '.reqntid' cannot both be specified\n4 | .entry k() .maxntid 64 .reqntid 64\n  |                        ^^^^^^^^^^^\n",
    );
    // "Deprecated feature: '.maxnctapersm directive' not supported as of PTX version 2.1".
    expect_error(
        &kernel_with(".entry k() .maxnctapersm 2"),
        "t.ptx:4:12: error: deprecated feature: '.maxnctapersm' is not supported as of PTX version 2.1\n4 | .entry k() .maxnctapersm 2\n  |            ^^^^^^^^^^^^^^^\n",
    );
    // ptxas: "Parsing error near '.noreturn'" on an entry, "near '.maxntid'" on a .func.
    expect_error(
        &kernel_with(".entry k() .noreturn"),
        "t.ptx:4:12: error: '.noreturn' is only allowed on a .func\n4 | .entry k() .noreturn\n  |            ^^^^^^^^^\n",
    );
    expect_error(
        &kernel_with(".func f() .maxnreg 32"),
        "t.ptx:4:11: error: '.maxnreg' is only allowed on an .entry function\n4 | .func f() .maxnreg 32\n  |           ^^^^^^^^^^^\n",
    );
    // "Too many maxnreg specified for entry k, will be ignored": a warning, as in ptxas.
    let (got, is_err) = render(&kernel_with(".entry k() .maxnreg 300"));
    assert!(!is_err, "{got}");
    assert!(
        got.starts_with("t.ptx:4:12: warning: '.maxnreg 300' is more than 255 registers; ignored"),
        "{got}"
    );
    // What ptxas takes stays clean.
    for ok in [
        ".entry k() .maxnreg 255 .maxntid 256, 1, 1 .minnctapersm 1",
        ".entry k() .reqntid 32, 2",
        ".func f() .noreturn",
    ] {
        let (got, is_err) = render(&kernel_with(ok));
        assert!(!is_err && got.is_empty(), "{ok}: {got}");
    }
}

/// "Entry function 'k' uses too much parameter space (0x1101 bytes, 0x1100 max)": the
/// parameters at their alignments, 0x1100 bytes at most; a declaration that ends exactly there
/// is accepted (as ptxas accepts it).
#[test]
fn parameter_space() {
    expect_error(
        &kernel_with(".entry k(.param .b8 big[70000])"),
        "t.ptx:4:8: error: entry function 'k' uses too much parameter space (0x11170 bytes, 0x1100 max)\n4 | .entry k(.param .b8 big[70000])\n  |        ^\n",
    );
    expect_error(
        &kernel_with(".entry k(.param .b8 a, .param .align 8 .b8 big[4345])"),
        "t.ptx:4:8: error: entry function 'k' uses too much parameter space (0x1101 bytes, 0x1100 max)\n4 | .entry k(.param .b8 a, .param .align 8 .b8 big[4345])\n  |        ^\n",
    );
    // Sizes whose product overflows u64 saturate instead of wrapping to something small.
    let (got, is_err) = render(&kernel_with(
        ".entry k(.param .b64 big[4294967296][4294967296])",
    ));
    assert!(
        is_err && got.contains("uses too much parameter space"),
        "{got}"
    );
    let (got, is_err) = render(&kernel_with(".entry k(.param .b8 big[4352])"));
    assert!(!is_err && got.is_empty(), "{got}");
}

/// "File uses too much global constant data (0x11170 bytes, 0x10000 max)": at the variable
/// that crosses constant bank 3's 64 KB.
#[test]
fn constant_space() {
    let src = ".version 7.0\n.target sm_50\n.address_size 64\n.const .b8 a[65530];\n.const .align 8 .b8 b[8];\n";
    expect_error(
        src,
        "t.ptx:5:21: error: file uses too much global constant data (0x10008 bytes, 0x10000 max)\n5 | .const .align 8 .b8 b[8];\n  |                     ^\n",
    );
    let (got, is_err) =
        render(".version 7.0\n.target sm_50\n.address_size 64\n.const .b8 a[65536];\n");
    assert!(!is_err && got.is_empty(), "{got}");
}

/// Limits only the compile knows (the kernel's own shared and local layout): a located error
/// at the kernel's name, ptxas's words for shared data.
#[test]
fn shared_and_local_limits() {
    let compile_err = |src: &str| {
        let opts = leafold::driver::Options {
            file_name: "t.ptx".to_string(),
            ..Default::default()
        };
        match leafold::driver::compile(src, &opts) {
            Ok(_) => String::new(),
            Err(d) => render_all(&d.0),
        }
    };
    let kernel = |decl: &str, space: &str| {
        format!(".version 7.0\n.target sm_50\n.address_size 64\n{decl}\n.entry k()\n{{\n\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, s;\n\tst.{space}.u8 [%rd1], 1;\n\tret;\n}}\n")
    };
    assert_eq!(
        compile_err(&kernel(".shared .b8 s[49153];", "shared")),
        "t.ptx:5:8: error: entry function 'k' uses too much shared data (0xc001 bytes, 0xc000 max)\n5 | .entry k()\n  |        ^\n"
    );
    assert_eq!(compile_err(&kernel(".shared .b8 s[49152];", "shared")), "");
    // An unused array costs nothing (as in ptxas).
    assert_eq!(
        compile_err(&kernel(
            ".shared .b8 s[4];\n.shared .b8 t[70000];",
            "shared"
        )),
        ""
    );
    let local = |n: u64| {
        format!(".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{{\n\t.local .b8 s[{n}];\n\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, s;\n\tst.local.u8 [%rd1], 1;\n\tret;\n}}\n")
    };
    // ptxas compiles a 100 MB frame; from 2 GB on its frame size wraps.
    assert_eq!(compile_err(&local(100_000_000)), "");
    assert_eq!(
        compile_err(&local(0x7fff_0001)),
        "t.ptx:4:8: error: entry function 'k' uses too much local data (0x7fff0001 bytes per thread, 0x7fff0000 max)\n4 | .entry k()\n  |        ^\n"
    );
}

/// Sizes that do not fit: an array size is named as written (18446744073709551615 wrapped to
/// "negative array size -1" before), and a product over 4 GB is refused by the builder.
#[test]
fn sizes_out_of_range() {
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.global .b8 g[18446744073709551615];\n",
        "t.ptx:4:15: error: array size 18446744073709551615 is out of range\n4 | .global .b8 g[18446744073709551615];\n  |               ^^^^^^^^^^^^^^^^^^^^\n",
    );
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.global .b8 g[-1];\n",
        "t.ptx:4:15: error: array size -1 is out of range\n4 | .global .b8 g[-1];\n  |               ^^\n",
    );
    expect_error(
        ".version 7.0\n.target sm_50\n.address_size 64\n.entry k() .maxntid 4294967296\n{\n\tret;\n}\n",
        "t.ptx:4:21: error: thread count 4294967296 is out of range\n4 | .entry k() .maxntid 4294967296\n  |                     ^^^^^^^^^^\n",
    );
}
