//! Functions of a relocatable object (issue 22, separate compilation): under `-c`, a
//! `.visible .func` with a body is written as a function other objects call, as ptxas 11.8
//! writes one (docs/calls.md, "Separate compilation"): its own `.text.<f>` (no prologue,
//! ending in `RET`), a GLOBAL FUNC symbol without `STO_CUDA_ENTRY`, no `.nv.constant0.<f>`,
//! `.nv.info.<f>` with the version records and its externs, the module `.nv.info`'s
//! REGCOUNT and frame records, the `.nv.callgraph` edge and `R_CUDA_ABS32_20` of each call
//! it makes to another object, and its `-v` line.
//!
//! Checked: the object's structure (and, with the oracle, the same sections, symbols and
//! relocation kinds as ptxas's object, `.nv.prototype` aside), every word by nvdisasm as we
//! print it, the hazard checker, and the meaning: the function's code, linked by hand into
//! a kernel compiled with `-c` that calls it (its `JCAL` made a `CAL` to the function's code
//! appended after the kernel's, what nvlink does with the relocation), run by the simulator,
//! equals `ir::eval` on the same kernel with the function defined in its module.

mod common;

use common::warp_kernel::{launch, OUT};
use leafold::cubin::{self, CubinSpec};
use leafold::driver::{compile, Emit, Options, Output};
use leafold::ir::eval;
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::{check_hazards, decode_text};
use leafold::sm50::{self, Field, Form};

/// The library object: `scale(x)` calls `offset(x)` in another object (nvcc 11.8's
/// `-rdc=true` PTX for `tests/data/nvcc-flow/rdc_lib.cu`).
const LIB: &str = r#".version 7.8
.target sm_50
.address_size 64
.extern .func  (.param .b32 func_retval0) offset
(
	.param .b32 offset_param_0
)
;
.visible .func  (.param .b32 func_retval0) scale(
	.param .b32 scale_param_0
)
{
	.reg .b32 	%r<4>;
	ld.param.u32 	%r1, [scale_param_0];
	{
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), offset, (param0);
	ld.param.b32 	%r2, [retval0+0];
	}
	mul.lo.s32 	%r3, %r2, 3;
	st.param.b32 	[func_retval0+0], %r3;
	ret;
}
"#;

/// A leaf library function with a loop, a 64-bit pointer argument and a global load:
/// `poly(p, n, x)` = Horner's rule over the `n & 7` coefficients at `p`.
const POLY: &str = r#".visible .func  (.param .b32 func_retval0) poly(
	.param .b64 poly_param_0,
	.param .b32 poly_param_1,
	.param .b32 poly_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [poly_param_0];
	ld.param.u32 	%r1, [poly_param_1];
	ld.param.u32 	%r2, [poly_param_2];
	and.b32 	%r1, %r1, 7;
	mov.u32 	%r3, 0;
	setp.eq.s32 	%p1, %r1, 0;
	@%p1 bra 	$L_done;
$L_loop:
	add.s32 	%r1, %r1, -1;
	mul.wide.u32 	%rd2, %r1, 4;
	add.s64 	%rd3, %rd1, %rd2;
	ld.global.u32 	%r4, [%rd3];
	mad.lo.s32 	%r3, %r3, %r2, %r4;
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$L_loop;
$L_done:
	st.param.b32 	[func_retval0+0], %r3;
	ret;
}
"#;

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// A kernel `k(in, out)` calling `poly(in + 64, in[g], in[g] >> 8)` for each thread `g`,
/// after `decl` (the module header first). The pointer is not a kernel parameter's value, so
/// code that read it from the parameter bank instead of R4:R5 would differ.
fn kernel(decl: &str) -> String {
    format!(
        r#"{HEADER}{decl}
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<9>;
	ld.param.u64 	%rd1, [k_in];
	ld.param.u64 	%rd2, [k_out];
	cvta.to.global.u64 	%rd3, %rd1;
	cvta.to.global.u64 	%rd4, %rd2;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	mul.wide.u32 	%rd5, %r4, 4;
	add.s64 	%rd6, %rd3, %rd5;
	ld.global.u32 	%r5, [%rd6];
	shr.u32 	%r6, %r5, 8;
	{{
	.param .b64 param0;
	add.s64 	%rd8, %rd3, 64;
	st.param.b64 	[param0+0], %rd8;
	.param .b32 param1;
	st.param.b32 	[param1+0], %r5;
	.param .b32 param2;
	st.param.b32 	[param2+0], %r6;
	.param .b32 retval0;
	call.uni (retval0), poly, (param0, param1, param2);
	ld.param.b32 	%r7, [retval0+0];
	}}
	mul.wide.u32 	%rd5, %r4, 32;
	add.s64 	%rd7, %rd4, %rd5;
	st.global.u32 	[%rd7], %r7;
	ret;
}}
"#
    )
}

const POLY_DECL: &str = ".extern .func  (.param .b32 func_retval0) poly(.param .b64 poly_param_0, .param .b32 poly_param_1, .param .b32 poly_param_2);";

/// Compile `src` as a relocatable object (`-c`, `-v`, with a SASS listing).
fn object(test: &str, src: &str) -> Output {
    let opts = Options {
        file_name: format!("{test}.ptx"),
        emit: Emit::Sass,
        relocatable: true,
        verbose: true,
        ..Options::default()
    };
    compile(src, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)))
}

/// The object of `src`, which must write its function `f` (no "not written" warning), with
/// `f`'s code words and their listing ([`check_code`]).
fn function_f(test: &str, src: &str) -> (cubin::Cubin, Vec<u64>, Vec<String>) {
    let out = object(test, src);
    let diags = leafold::error::render_all(&out.diagnostics);
    assert!(!diags.contains("not written"), "{test}: {diags}");
    let c = cubin::read(&out.cubin).unwrap();
    let words = text(&c, "f");
    let listing = check_code(test, &words);
    (c, words, listing)
}

/// The code words of `.text.<name>` in an object.
fn text(c: &cubin::Cubin, name: &str) -> Vec<u64> {
    let s = c
        .section(&format!(".text.{name}"))
        .unwrap_or_else(|| panic!("no .text.{name}"));
    s.data
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

/// The function's code decodes, has no hazards, starts without the kernel prologue, ends in
/// `RET`, and nvdisasm prints each instruction as we do.
fn check_code(test: &str, words: &[u64]) -> Vec<String> {
    let (insts, ctrl, targets) = decode_text(words).expect("decodes");
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "{test}: hazards: {errs:?}");
    assert!(
        !(insts[0].form == Form::MOV_C && insts[0].get(Field::Rd) == Some(1)),
        "{test}: a function has no MOV R1, c[0x0][0x20] prologue"
    );
    assert!(insts.iter().any(|i| i.form == Form::RET), "{test}: RET");
    assert!(
        !insts.iter().any(|i| i.form == Form::EXIT),
        "{test}: no EXIT"
    );
    common::check_with_nvdisasm(test, &insts);
    insts.iter().map(|i| sm50::print(i, 0, 0)).collect()
}

#[test]
fn visible_func_is_a_function_of_the_object() {
    let out = object("objf_lib", LIB);
    let c = cubin::read(&out.cubin).expect("reads back");
    assert_eq!(c.header.e_type, 1, "ET_REL");
    let sym = |n: &str| {
        c.symbols
            .iter()
            .position(|s| s.name == n)
            .unwrap_or_else(|| panic!("no symbol {n}"))
    };
    let (scale, offset) = (sym("scale"), sym("offset"));
    let text_idx = c
        .sections
        .iter()
        .position(|s| s.name == ".text.scale")
        .unwrap();
    let s = &c.symbols[scale];
    assert_eq!((s.info, s.other, usize::from(s.shndx)), (0x12, 0, text_idx));
    let o = &c.symbols[offset];
    assert_eq!(
        (o.info, o.shndx),
        (0x12, 0),
        "offset: undefined GLOBAL FUNC"
    );
    assert!(c.section(".nv.constant0.scale").is_none());
    assert!(c.section(".nv.info.scale").is_some());
    // sh_info: register count << 24 | the function's symbol.
    assert_eq!(c.sections[text_idx].info & 0xff_ffff, scale as u32);
    // The call: a JCAL with R_CUDA_ABS32_20 against `offset`, and the call-graph edge.
    let words = text(&c, "scale");
    let listing = check_code("objf_lib", &words);
    assert!(listing.iter().any(|t| t.starts_with("JCAL")), "{listing:?}");
    let rel = c
        .relocations
        .iter()
        .find(|r| r.target == text_idx)
        .expect(".rel.text.scale");
    assert_eq!(rel.relocs.len(), 1);
    assert_eq!(
        (rel.relocs[0].sym as usize, rel.relocs[0].rtype),
        (offset, 0x2a)
    );
    let at = rel.relocs[0].offset as usize / 8;
    assert_eq!(sm50::decode(words[at]).unwrap().form, Form::JCAL);
    let graph = c.section(".nv.callgraph").expect(".nv.callgraph");
    let edges: Vec<(i32, i32)> = graph
        .data
        .chunks_exact(8)
        .map(|e| {
            (
                i32::from_le_bytes(e[..4].try_into().unwrap()),
                i32::from_le_bytes(e[4..].try_into().unwrap()),
            )
        })
        .collect();
    assert!(edges.contains(&(scale as i32, offset as i32)), "{edges:?}");
    use cubin::eiattr::Attribute;
    assert!(
        c.info
            .iter()
            .any(|a| matches!(a, Attribute::RegCount { sym, .. } if *sym as usize == scale)),
        "{:?}",
        c.info
    );
    assert!(
        out.info_log.contains("Function properties for scale\n"),
        "{}",
        out.info_log
    );
    if let Some(oracle) = Oracle::for_test("objf_lib") {
        let theirs = cubin::read(&oracle.ptxas(LIB, "sm_50", &["-c"]).unwrap()).unwrap();
        let names = |c: &cubin::Cubin| {
            let mut v: Vec<String> = c
                .sections
                .iter()
                .map(|s| s.name.clone())
                .filter(|n| !n.is_empty() && n != ".nv.prototype")
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&c), names(&theirs));
        let syms = |c: &cubin::Cubin| {
            let mut v: Vec<(String, u8, u8, bool)> = c
                .symbols
                .iter()
                .filter(|s| s.info & 0xf == 2)
                .map(|s| (s.name.clone(), s.info, s.other, s.shndx == 0))
                .collect();
            v.sort();
            v
        };
        assert_eq!(syms(&c), syms(&theirs));
        // cuobjdump lists the function exactly as our listing (nvdisasm: `check_code`).
        common::assert_cuobjdump_lists(&oracle, "objf_lib", &out.cubin, &out.sass);
    }
}

/// Whole-program compiles keep inlining a `.visible .func`: no function of its own.
#[test]
fn whole_program_still_inlines() {
    let src = kernel(POLY);
    let out = compile(&src, &Options::default())
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).unwrap();
    assert!(c.section(".text.poly").is_none());
    let obj = object("objf_inline", &src);
    let c = cubin::read(&obj.cubin).unwrap();
    assert!(
        c.section(".text.poly").is_some(),
        "-c writes it for other objects"
    );
    // The kernel of the same module still inlines it: no call.
    let k = c.kernels.iter().find(|k| k.name == "k").unwrap();
    let (insts, _, _) = decode_text(&k.code).unwrap();
    assert!(!insts
        .iter()
        .any(|i| matches!(i.form, Form::JCAL | Form::CAL)));
}

/// A `.visible .func` with `.local` data is a function of the object with that data in its
/// R1 frame, as `ptxas -c` writes it (probe `loc.ptx`: `IADD32I R1, R1, -0x10`, the array
/// at `[R1]`, `+0x10` before the `RET`; "16 bytes stack frame, 0 bytes spill stores"),
/// the saves of callee-saved registers above the array. One
/// the object-function path cannot compile (here: `.reg` parameters, which ptxas accepts)
/// is left out with a warning; the object is still written.
#[test]
fn local_data_in_the_frame_and_unsupported_function_left_out() {
    let src = &[
        HEADER,
        ".visible .func (.param .b32 r) loc(.param .b32 a)\n{\n .local .align 4 .b8 buf[16];\n\
        .reg .b32 %r<4>; .reg .b64 %rd<4>;\n ld.param.u32 %r1, [a];\n mov.u64 %rd1, buf;\n\
        and.b32 %r3, %r1, 3;\n mul.wide.u32 %rd2, %r3, 4;\n add.s64 %rd3, %rd1, %rd2;\n\
        st.local.u32 [%rd3], %r1;\n ld.local.u32 %r2, [%rd1+4];\n st.param.b32 [r], %r2;\n ret;\n}\n",
        ".visible .func (.reg .b32 r) sh(.reg .b32 a)\n{\n add.u32 r, a, 1;\n ret;\n}\n",
    ]
    .concat();
    let out = object("objf_local", src);
    let c = cubin::read(&out.cubin).unwrap();
    let listing = check_code("objf_local", &text(&c, "loc"));
    // The frame: the array, then the saves of the callee-saved registers the function
    // writes (ptxas keeps its temporary in R3 and saves none; ours may take R2 and save it).
    let frame = listing[0]
        .strip_prefix("IADD32I R1, R1, -0x")
        .and_then(|x| u32::from_str_radix(x, 16).ok())
        .unwrap_or_else(|| panic!("the frame first: {listing:?}"));
    let saves = listing
        .iter()
        .filter(|t| t.starts_with("STL [R1+0x1"))
        .count() as u32;
    assert_eq!(frame, (16 + 4 * saves).next_multiple_of(8), "{listing:?}");
    assert!(
        listing
            .iter()
            .any(|t| t.starts_with("STL [R") && !t.starts_with("STL [R1"))
            && listing.iter().any(|t| t == "LDL R4, [R1+0x4]")
            && listing.contains(&format!("IADD32I R1, R1, 0x{frame:x}")),
        "the array at [R1], the frame given back: {listing:?}"
    );
    // The array's stores are not spills; the saves are, as ptxas counts them.
    let line = format!(
        "Function properties for loc\n    {frame} bytes stack frame, {0} bytes spill stores, {0} bytes spill loads",
        4 * saves
    );
    assert!(out.info_log.contains(&line), "{line}\n{}", out.info_log);
    assert!(c.section(".text.sh").is_none());
    let text = leafold::error::render_all(&out.diagnostics);
    assert!(
        text.contains("'sh' is not written as a function of the object"),
        "{text}"
    );
    assert!(!text.contains("'loc'"), "{text}");
}

/// The meaning: the kernel's object and the function's object linked by hand (the `JCAL`
/// becomes a `CAL` to the function's code placed after the kernel's), simulated, against
/// `ir::eval` on the kernel with `poly` defined in its module.
#[test]
fn linked_by_hand_matches_eval() {
    let lib_src = format!("{HEADER}{POLY}");
    let lib = object("objf_poly", &lib_src);
    let lib_c = cubin::read(&lib.cubin).unwrap();
    let func = text(&lib_c, "poly");
    check_code("objf_poly", &func);
    let main = object("objf_main", &kernel(POLY_DECL));
    let linked = link_by_hand(&main, &lib_c, "poly");
    let module = common::ir_module("objf_whole.ptx", kernel(POLY));
    sim_matches_eval(&module, &linked);
}

/// The kernel `k` of object `main` linked by hand with function `f` of object `lib`: its
/// `JCAL` to `f` made a `CAL` to `f`'s code appended after the kernel's (what nvlink does
/// with the relocation), as an executable cubin.
fn link_by_hand(main: &Output, lib: &cubin::Cubin, f: &str) -> Vec<u8> {
    link_functions(main, lib, &[f])
}

/// [`link_by_hand`] with every function of `funcs` (of object `lib`) appended after the
/// kernel's code, in order: each `JCAL` (`R_CUDA_ABS32_20`) of the kernel or of an
/// appended function against one of them (its own symbol in `lib`) made a `CAL` to its copy.
fn link_functions(main: &Output, lib: &cubin::Cubin, funcs: &[&str]) -> Vec<u8> {
    let main_c = cubin::read(&main.cubin).unwrap();
    let mut spec = CubinSpec::from_cubin(&main_c);
    let k = spec.kernels.iter_mut().find(|k| k.name == "k").unwrap();
    // (offset of a `JCAL` in the linked code, the function it calls)
    let mut calls: Vec<(u64, String)> = k
        .relocs
        .iter()
        .filter(|r| funcs.contains(&r.symbol.as_str()))
        .map(|r| (r.offset, r.symbol.clone()))
        .collect();
    assert!(!calls.is_empty(), "the kernel calls none of {funcs:?}");
    k.relocs.clear();
    let mut starts = Vec::new();
    for f in funcs {
        let start = (k.code.len() * 8) as u64;
        starts.push((f.to_string(), start));
        k.code.extend_from_slice(&text(lib, f));
        let section = lib
            .sections
            .iter()
            .position(|s| s.name == format!(".text.{f}"))
            .unwrap();
        for r in lib.relocations.iter().filter(|r| r.target == section) {
            for e in &r.relocs {
                let name = &lib.symbols[e.sym as usize].name;
                if e.rtype == 0x2a && funcs.contains(&name.as_str()) {
                    calls.push((start + e.offset, name.clone()));
                }
            }
        }
        k.regcount = k.regcount.max(lib.sections[section].info >> 24);
    }
    for (at, callee) in calls {
        let start = starts.iter().find(|(n, _)| *n == callee).unwrap().1;
        let rel = sm50::ctrl::branch_rel(at, start).unwrap();
        k.code[at as usize / 8] =
            sm50::encode(&sm50::Inst::new(Form::CAL).with(Field::Rel, u64::from(rel)));
    }
    spec.handles.retain(|(n, _)| !funcs.contains(&n.as_str()));
    cubin::write(&spec)
}

/// The simulator on `linked` equals `ir::eval` on `module` (kernel `k`, three launches).
fn sim_matches_eval(module: &leafold::ir::Module, linked: &[u8]) {
    for seed in 0..3 {
        let mut l = launch(seed);
        // The function's frame is below R1, in the stack the launch gives each thread.
        l.local_size = 4096;
        let want = eval::run(module, "k", &l).unwrap_or_else(|e| panic!("eval: {e}"));
        let got = sim::run_cubin(linked, "k", &l).unwrap_or_else(|e| panic!("sim: {e}"));
        assert_eq!(
            got.region(OUT).unwrap(),
            want.region(OUT).unwrap(),
            "seed {seed}"
        );
    }
}

/// A function whose parameter is an aggregate of bytes (`.b8 p[3]`, CUDA's `uchar3`):
/// the caller packs the bytes into one argument word (ptxas: `BFI R4, R4, 0x808, R2`) and
/// the function shifts each out (ptxas: `BFE.U32 R3, R4, 0x808`). It was left out of the
/// object ("cannot lower a i8 subroutine parameter"; mummergpu's `arrayToAddress(uchar3,
/// unsigned&)`). Checked: it is written, nvdisasm, hazards, and linked by hand into a
/// kernel, the simulator equals `ir::eval` with the function in the kernel's module.
#[test]
fn byte_aggregate_parameter() {
    let sig = "(.param .b32 r) f(.param .align 1 .b8 p[3], .param .b32 q)";
    let body = "{\n .reg .b32 %r<8>; .reg .b16 %rs<4>;\n\
        ld.param.u8 %rs1, [p+0];\n ld.param.u8 %rs2, [p+1];\n ld.param.u8 %rs3, [p+2];\n\
        ld.param.u32 %r4, [q];\n cvt.u32.u16 %r1, %rs1;\n cvt.u32.u16 %r2, %rs2;\n\
        cvt.u32.u16 %r3, %rs3;\n mad.lo.s32 %r5, %r2, 1000, %r1;\n\
        mad.lo.s32 %r6, %r3, 77, %r5;\n xor.b32 %r6, %r6, %r4;\n st.param.b32 [r], %r6;\n\
        ret;\n}\n";
    let call = "{\n .reg .b16 %rs<4>;\n cvt.u16.u32 %rs1, %r2;\n shr.u32 %r3, %r2, 8;\n\
        cvt.u16.u32 %rs2, %r3;\n shr.u32 %r4, %r2, 16;\n cvt.u16.u32 %rs3, %r4;\n\
        .param .align 1 .b8 a0[3]; .param .b32 a1; .param .b32 r0;\n\
        st.param.b8 [a0+0], %rs1;\n st.param.b8 [a0+1], %rs2;\n st.param.b8 [a0+2], %rs3;\n\
        st.param.b32 [a1], %r1;\n call.uni (r0), f, (a0, a1);\n ld.param.b32 %r5, [r0];\n}\n\
        st.global.u32 [%rd3], %r5;\n";
    let lib_src = format!("{HEADER}.visible .func {sig}\n{body}");
    let (lib_c, _, _) = function_f("objf_bytes", &lib_src);
    let main = object(
        "objf_bytes_main",
        &common::warp_kernel::kernel(&format!(".extern .func {sig};"), call),
    );
    let linked = link_by_hand(&main, &lib_c, "f");
    let whole = common::warp_kernel::kernel(&format!(".func {sig}\n{body}"), call);
    let module = common::ir_module("objf_bytes_whole.ptx", whole);
    sim_matches_eval(&module, &linked);
}

/// `-v` for functions of the object counts the saves of callee-saved registers as spills,
/// as ptxas does (probe `of.ptx`: `f` keeps `7x` in R2 across a `JCAL` of an extern, saves
/// it: "8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads"). And a function
/// with more arguments than R4..R15 hold (probe `many.ptx`, 16 words: ptxas reads the
/// last four with `LDL R0, [R1]` .. `[R1+0xc]` and has "0 bytes stack frame") is a function
/// of the object now, reading them above its own frame, and those loads are not spills.
#[test]
fn saves_are_spills_and_stack_arguments() {
    let params: Vec<String> = (0..16).map(|i| format!(".param .b32 a{i}")).collect();
    let sums: String = (0..16)
        .map(|i| {
            format!(
                " ld.param.b32 %r{}, [a{i}]; add.s32 %r0, %r0, %r{};\n",
                i + 1,
                i + 1
            )
        })
        .collect();
    let src = format!(
        "{HEADER}.extern .func (.param .b32 r) g(.param .b32 a);\n\
        .visible .func (.param .b32 rv) f(.param .b32 x)\n{{\n .reg .b32 %r<8>;\n\
        ld.param.b32 %r1, [x];\n mul.lo.s32 %r2, %r1, 7;\n\
        {{ .param .b32 p; st.param.b32 [p], %r1; .param .b32 q; call.uni (q), g, (p); ld.param.b32 %r3, [q]; }}\n\
        add.s32 %r4, %r3, %r2;\n st.param.b32 [rv], %r4;\n ret;\n}}\n\
        .visible .func (.param .b32 rv) many({})\n{{\n .reg .b32 %r<20>;\n mov.b32 %r0, 0;\n{sums}\
        st.param.b32 [rv], %r0;\n ret;\n}}\n",
        params.join(", ")
    );
    let out = object("objf_saves", &src);
    let c = cubin::read(&out.cubin).unwrap();
    let f = check_code("objf_saves_f", &text(&c, "f"));
    let frame = |l: &[String]| {
        l[0].strip_prefix("IADD32I R1, R1, -0x")
            .and_then(|x| u32::from_str_radix(x, 16).ok())
            .unwrap_or(0)
    };
    let saves = f.iter().filter(|t| t.starts_with("STL [R1")).count() as u32;
    assert!(saves > 0, "7x lives across the call: {f:?}");
    let line = format!(
        "Function properties for f\n    {} bytes stack frame, {1} bytes spill stores, {1} bytes spill loads",
        frame(&f),
        4 * saves
    );
    assert!(out.info_log.contains(&line), "{line}\n{}", out.info_log);
    // The four stack words at [R1 + frame + 0..0xc].
    let many = check_code("objf_saves_many", &text(&c, "many"));
    let fr = frame(&many);
    for k in 0..4u32 {
        let at = match fr + 4 * k {
            0 => "[R1]".to_string(),
            o => format!("[R1+0x{o:x}]"),
        };
        assert!(
            many.iter()
                .any(|t| t.starts_with("LDL") && t.ends_with(&at)),
            "stack word {k} at {at}: {many:?}"
        );
    }
    let stores = many.iter().filter(|t| t.starts_with("STL [R1")).count() as u32;
    let line = format!(
        "Function properties for many\n    {fr} bytes stack frame, {0} bytes spill stores, {0} bytes spill loads",
        4 * stores
    );
    assert!(out.info_log.contains(&line), "{line}\n{}", out.info_log);
}

/// A function of the object with `.shared` data (its own array and a module-scope one) and a
/// literal of its own, as ptxas 11.8 writes it under `-c` (probe `sh2.ptx`, docs/calls.md):
/// the variables in a NOBITS `.nv_debug.shared` (`SHT_CUDA_SHARED`, flags WA, their sizes at
/// their alignments), each a LOCAL `STT_CUDA_OBJECT` symbol with `STO_CUDA_SHARED` whose
/// value is its alignment (the module-scope `gbuf` by its name, the function's `buf` as
/// `$__buf__N`); each address a `MOV32I Rn, 0x0` under `R_CUDA_ABS24_20`; the literal in
/// `.nv.constant2.f` (`SHT_CUDA_CONSTANT_B2`) under a LOCAL `f.const_opt.*` symbol
/// (`st_other` 0x81), its operand `c[0x0][0x0]` under `R_CUDA_CONST_FIELD19_20`. Before,
/// such a function was left out with a warning.
#[test]
fn shared_data_and_literals_relocated() {
    let src = format!(
        "{HEADER}.shared .align 16 .b8 gbuf[32];\n\
         .visible .func (.param .b32 r) f(.param .b32 a)\n{{\n\
         .reg .b32 %r<6>; .reg .f32 %f<4>;\n .shared .align 8 .b8 buf[64];\n\
         ld.param.b32 %r1, [a];\n mov.u32 %r2, buf;\n shl.b32 %r3, %r1, 2;\n\
         add.s32 %r4, %r2, %r3;\n st.shared.u32 [%r4], %r1;\n st.shared.u32 [gbuf+8], %r1;\n\
         bar.sync 0;\n ld.shared.u32 %r5, [buf+4];\n cvt.rn.f32.s32 %f1, %r5;\n\
         fma.rn.f32 %f2, %f1, 0f3FC00001, 0f3FC00003;\n cvt.rzi.s32.f32 %r5, %f2;\n\
         st.param.b32 [r], %r5;\n ret;\n}}\n"
    );
    let (c, words, listing) = function_f("objf_shared", &src);
    let shared = c
        .sections
        .iter()
        .position(|s| s.name == ".nv_debug.shared")
        .expect(".nv_debug.shared");
    let s = &c.sections[shared];
    assert_eq!(
        (s.sh_type, s.flags, s.size, s.align),
        (0x7000_000a, 3, 0x60, 0x10)
    );
    let var = |name: &str| {
        c.symbols
            .iter()
            .position(|y| y.name == name || (name == "buf" && y.name.starts_with("$__buf__")))
            .unwrap_or_else(|| panic!("no symbol {name}"))
    };
    let (gbuf, buf) = (var("gbuf"), var("buf"));
    for (at, align, size) in [(gbuf, 0x10, 0x20), (buf, 0x8, 0x40)] {
        let y = &c.symbols[at];
        assert_eq!(
            (y.info, y.other, usize::from(y.shndx), y.value, y.size),
            (0xd, 0x40, shared, align, size),
            "{}",
            y.name
        );
    }
    let text_idx = c.sections.iter().position(|s| s.name == ".text.f").unwrap();
    let relocs: Vec<&cubin::Reloc> = c
        .relocations
        .iter()
        .filter(|r| r.target == text_idx)
        .flat_map(|r| &r.relocs)
        .collect();
    let inst_at = |off: u64| sm50::decode(words[off as usize / 8]).unwrap();
    for v in [gbuf, buf] {
        let r = relocs
            .iter()
            .find(|r| r.sym as usize == v)
            .unwrap_or_else(|| panic!("no relocation against {}", c.symbols[v].name));
        assert_eq!(r.rtype, 0x2d, "R_CUDA_ABS24_20");
        let i = inst_at(r.offset);
        assert_eq!((i.form, i.get(Field::Imm)), (Form::MOV32I, Some(0)));
    }
    let pool = c.section(".nv.constant2.f").expect(".nv.constant2.f");
    assert_eq!((pool.sh_type, pool.flags), (0x7000_0066, 2));
    let lit = relocs
        .iter()
        .find(|r| r.rtype == 0x32)
        .expect("the literal's relocation");
    let y = &c.symbols[lit.sym as usize];
    assert!(y.name.starts_with("f.const_opt."), "{}", y.name);
    assert_eq!((y.info, y.other), (0xd, 0x81));
    let at = (y.value as i64 + lit.addend.unwrap_or(0)) as usize;
    let word = u32::from_le_bytes(pool.data[at..at + 4].try_into().unwrap());
    assert!(
        [0x3fc0_0001, 0x3fc0_0003].contains(&word),
        "{word:#x} {listing:?}"
    );
    assert!(
        listing.iter().any(|t| t.contains("c[0x0][0x0]")),
        "the operand's bank and offset are the linker's: {listing:?}"
    );
    if let Some(oracle) = Oracle::for_test("objf_shared") {
        let theirs = cubin::read(&oracle.ptxas(&src, "sm_50", &["-c"]).unwrap()).unwrap();
        let sec = |c: &cubin::Cubin, n: &str| {
            let s = c.section(n).unwrap_or_else(|| panic!("no {n}"));
            (s.sh_type, s.flags, s.size, s.align, s.info != 0)
        };
        for n in [".nv_debug.shared", ".nv.constant2.f"] {
            assert_eq!(sec(&c, n), sec(&theirs, n), "{n}");
        }
        let shared_syms = |c: &cubin::Cubin| {
            let mut v: Vec<(u8, u8, u64, u64)> = c
                .symbols
                .iter()
                .filter(|y| y.other == 0x40)
                .map(|y| (y.info, y.other, y.value, y.size))
                .collect();
            v.sort();
            v
        };
        assert_eq!(shared_syms(&c), shared_syms(&theirs));
        let types = |c: &cubin::Cubin| {
            let t = c.sections.iter().position(|s| s.name == ".text.f").unwrap();
            let mut v: Vec<u32> = c
                .relocations
                .iter()
                .filter(|r| r.target == t)
                .flat_map(|r| r.relocs.iter().map(|e| e.rtype))
                .collect();
            v.sort();
            v.dedup();
            v
        };
        // (Not `assert_cuobjdump_lists`: the `-sass` listing is the code before the literal's
        // operand is cleared for its relocation; `check_code` ran nvdisasm on every word.)
        assert_eq!(types(&c), types(&theirs));
    }
}

/// A dynamically sized `.extern .shared` array in a function of the object, as ptxas 11.8
/// writes it (probe `dyn.ptx` in docs/calls.md): an undefined GLOBAL symbol (`st_info` 0x1d,
/// `st_other` 0x40, section 0, value and size 0), no `.nv_debug.shared` for it, and every
/// use an `R_CUDA_ABS24_20` relocation of a `MOV32I R, 0x0` against it (nvlink resolves it
/// after the calling kernel's static window). With the oracle: the same sections (names,
/// types, flags, alignments; `.nv.prototype` and the relocation sections aside: ptxas also
/// folds `[dsm+4]`'s offset into the `LDS` as an addend, `.rela.text.f`), the same symbol,
/// the same relocation types against the same symbols.
#[test]
fn dynamic_shared_is_an_undefined_symbol() {
    let src = format!(
        "{HEADER}.extern .shared .align 16 .b8 dsm[];\n\
         .visible .func (.param .b32 r) f(.param .b32 a)\n{{\n\
         .reg .b32 %r<6>;\n ld.param.u32 %r1, [a];\n mov.u32 %r2, dsm;\n shl.b32 %r3, %r1, 2;\n\
         add.u32 %r4, %r2, %r3;\n st.shared.u32 [%r4], %r1;\n ld.shared.u32 %r5, [dsm+4];\n\
         st.param.b32 [r], %r5;\n ret;\n}}\n"
    );
    let (c, words, _) = function_f("objf_dyn", &src);
    assert!(c.section(".nv_debug.shared").is_none(), "no static data");
    let dsm = c
        .symbols
        .iter()
        .position(|y| y.name == "dsm")
        .expect("the array's symbol");
    let y = &c.symbols[dsm];
    assert_eq!(
        (y.info, y.other, y.shndx, y.value, y.size),
        (0x1d, 0x40, 0, 0, 0)
    );
    let t = c.sections.iter().position(|s| s.name == ".text.f").unwrap();
    let relocs: Vec<&cubin::Reloc> = c
        .relocations
        .iter()
        .filter(|r| r.target == t)
        .flat_map(|r| &r.relocs)
        .filter(|r| r.sym as usize == dsm)
        .collect();
    assert!(!relocs.is_empty(), "the array's uses are relocated");
    for r in &relocs {
        assert_eq!(r.rtype, 0x2d, "R_CUDA_ABS24_20");
        let i = sm50::decode(words[r.offset as usize / 8]).unwrap();
        assert_eq!((i.form, i.get(Field::Imm)), (Form::MOV32I, Some(0)));
    }
    if let Some(oracle) = Oracle::for_test("objf_dyn") {
        let theirs = cubin::read(&oracle.ptxas(&src, "sm_50", &["-c"]).unwrap()).unwrap();
        let sections = |c: &cubin::Cubin| {
            let mut v: Vec<(String, u32, u64, u64)> = c
                .sections
                .iter()
                .filter(|s| !s.name.is_empty() && s.name != ".nv.prototype")
                // ptxas folds `+4` into the `LDS` (an addend, so `.rela.text.f` too).
                .filter(|s| !s.name.starts_with(".rel"))
                .map(|s| (s.name.clone(), s.sh_type, s.flags, s.align))
                .collect();
            v.sort();
            v
        };
        assert_eq!(sections(&c), sections(&theirs));
        let sym = |c: &cubin::Cubin| {
            c.symbols
                .iter()
                .find(|y| y.name == "dsm")
                .map(|y| (y.info, y.other, y.shndx, y.value, y.size))
        };
        assert_eq!(sym(&c), sym(&theirs));
        let types = |c: &cubin::Cubin| {
            let t = c.sections.iter().position(|s| s.name == ".text.f").unwrap();
            let mut v: Vec<(u32, String)> = c
                .relocations
                .iter()
                .filter(|r| r.target == t)
                .flat_map(|r| &r.relocs)
                .map(|e| (e.rtype, c.symbols[e.sym as usize].name.clone()))
                .collect();
            v.sort();
            v.dedup();
            v
        };
        assert_eq!(types(&c), types(&theirs));
    }
}

/// A `.visible .func` that reaches a recursive function, in an object with no kernel
/// (complex.ptx's `nv_hal_init` reaching the cycle `nv_vm_malloc_ext` ->
/// `nv_vm_malloc_large` -> `nv_vm_malloc_ext`). Under `-c` every visible function is a root
/// like a kernel, so the recursive `fact` is a subroutine of the standard ABI, placed after
/// `f`'s code (`CAL`, `RET`); before, `f` was left out ("unsupported recursive call"). ptxas
/// gives `fact` a `.text.fact` of its own and `JCAL`s it; the GLOBAL function symbols are the
/// same (checked with the oracle). The meaning: `f` linked by hand into a kernel, simulated,
/// equals `ir::eval` with both functions in the kernel's module.
#[test]
fn function_reaching_recursion() {
    const FACT: &str = ".func (.param .b32 r) fact(.param .b32 n)\n{\n\
        .reg .pred %p<2>; .reg .b32 %r<6>;\n ld.param.u32 %r1, [n];\n\
        setp.lt.u32 %p1, %r1, 2;\n mov.u32 %r5, 1;\n @%p1 bra $L_done;\n\
        add.s32 %r2, %r1, -1;\n{\n .param .b32 a0; .param .b32 r0;\n\
        st.param.b32 [a0], %r2;\n call.uni (r0), fact, (a0);\n ld.param.b32 %r3, [r0];\n}\n\
        mul.lo.s32 %r5, %r3, %r1;\n$L_done:\n st.param.b32 [r], %r5;\n ret;\n}\n";
    let sig = "(.param .b32 r) f(.param .b32 n)";
    let body = "{\n .reg .b32 %r<6>;\n ld.param.u32 %r1, [n];\n and.b32 %r2, %r1, 15;\n{\n\
        .param .b32 a0; .param .b32 r0;\n st.param.b32 [a0], %r2;\n\
        call.uni (r0), fact, (a0);\n ld.param.b32 %r3, [r0];\n}\n\
        xor.b32 %r4, %r3, %r1;\n st.param.b32 [r], %r4;\n ret;\n}\n";
    let lib_src = format!("{HEADER}{FACT}.visible .func {sig}\n{body}");
    let (lib_c, _, listing) = function_f("objf_rec", &lib_src);
    let count = |p: &str| listing.iter().filter(|t| t.starts_with(p)).count();
    assert!(
        count("CAL ") >= 2 && count("RET") >= 2 && count("JCAL") == 0,
        "f and the placed fact: {listing:?}"
    );
    let call = "    st.param.b32 [a0], %r2;\n    call.uni (r0), f, (a0);\n\
        ld.param.b32 %r5, [r0];\n    }\n    st.global.u32 [%rd3], %r5;\n";
    let call = format!("    {{\n    .param .b32 a0; .param .b32 r0;\n{call}");
    let main = object(
        "objf_rec_main",
        &common::warp_kernel::kernel(&format!(".extern .func {sig};"), &call),
    );
    let linked = link_by_hand(&main, &lib_c, "f");
    let whole = common::warp_kernel::kernel(&format!("{FACT}.func {sig}\n{body}"), &call);
    let module = common::ir_module("objf_rec_whole.ptx", whole);
    sim_matches_eval(&module, &linked);
    if let Some(oracle) = Oracle::for_test("objf_rec") {
        let theirs = cubin::read(&oracle.ptxas(&lib_src, "sm_50", &["-c"]).unwrap()).unwrap();
        let globals = |c: &cubin::Cubin| {
            let mut v: Vec<(String, u8, u8)> = c
                .symbols
                .iter()
                .filter(|s| s.info == 0x12)
                .map(|s| (s.name.clone(), s.info, s.other))
                .collect();
            v.sort();
            v
        };
        assert_eq!(globals(&lib_c), globals(&theirs));
        assert!(!globals(&lib_c).is_empty());
    }
}

/// `big(a)`: a `.visible .func` of `n` steps of a hash (3 PTX instructions each), no literals.
fn big_function(n: usize) -> String {
    let mut s = String::from(
        ".visible .func (.param .b32 r) big(.param .b32 a)\n{\n .reg .b32 %r<4>;\n\
         ld.param.u32 %r1, [a];\n mov.u32 %r2, %r1;\n",
    );
    for i in 0..n {
        s += &format!(
            " mad.lo.s32 %r2, %r2, {}, %r1;\n shr.u32 %r3, %r2, {};\n xor.b32 %r2, %r2, %r3;\n",
            2 * i + 3,
            i % 13 + 3
        );
    }
    s + " st.param.b32 [r], %r2;\n ret;\n}\n"
}

/// A large `.visible .func` that another function of the object calls stays a call, as ptxas
/// 11.8 keeps every call between an object's functions (calls11: complex.ptx's 409 calls are
/// all `JCAL`s): `f`'s two calls of `big` (over 100 PTX instructions) are `JCAL`s under
/// `R_CUDA_ABS32_20` against `big`'s own GLOBAL FUNC symbol (defined, not an extern: no
/// `EIATTR_EXTERNS` in `.nv.info.f`), and `f`'s code is far shorter than `big`'s; a small
/// callee (`twice`) is still inlined. With the oracle: ptxas's object has the same relocation
/// types against the same symbols in `.text.f`. The meaning: `f` and `big` linked by hand
/// into a kernel (each `JCAL` a `CAL`), simulated, equals `ir::eval` with the functions in
/// the kernel's module (where `big` is inlined).
#[test]
fn large_object_function_is_called_not_inlined() {
    let big = big_function(40);
    const TWICE: &str = ".visible .func (.param .b32 r) twice(.param .b32 a)\n{\n\
        .reg .b32 %r<3>;\n ld.param.u32 %r1, [a];\n add.s32 %r2, %r1, %r1;\n\
        st.param.b32 [r], %r2;\n ret;\n}\n";
    let sig = "(.param .b32 r) f(.param .b32 n)";
    let body = "{\n .reg .b32 %r<8>;\n ld.param.u32 %r1, [n];\n and.b32 %r2, %r1, 255;\n{\n\
        .param .b32 a0; .param .b32 r0;\n st.param.b32 [a0], %r2;\n\
        call.uni (r0), big, (a0);\n ld.param.b32 %r3, [r0];\n}\n shr.u32 %r4, %r1, 8;\n{\n\
        .param .b32 a0; .param .b32 r0;\n st.param.b32 [a0], %r4;\n\
        call.uni (r0), big, (a0);\n ld.param.b32 %r5, [r0];\n}\n{\n\
        .param .b32 a0; .param .b32 r0;\n st.param.b32 [a0], %r5;\n\
        call.uni (r0), twice, (a0);\n ld.param.b32 %r6, [r0];\n}\n\
        xor.b32 %r7, %r3, %r6;\n st.param.b32 [r], %r7;\n ret;\n}\n";
    let lib_src = format!("{HEADER}{big}{TWICE}.visible .func {sig}\n{body}");
    let (lib_c, words, listing) = function_f("objf_jcal", &lib_src);
    let count = |p: &str| listing.iter().filter(|t| t.starts_with(p)).count();
    assert_eq!(count("JCAL"), 2, "f calls big twice: {listing:?}");
    let big_words = text(&lib_c, "big");
    check_code("objf_jcal_big", &big_words);
    assert!(
        words.len() * 2 < big_words.len(),
        "f ({} words) must not hold big's code ({} words)",
        words.len(),
        big_words.len()
    );
    let f_relocs = |c: &cubin::Cubin| {
        let t = c.sections.iter().position(|s| s.name == ".text.f").unwrap();
        let mut v: Vec<(u32, String, u16)> = c
            .relocations
            .iter()
            .filter(|r| r.target == t)
            .flat_map(|r| &r.relocs)
            .map(|e| {
                let y = &c.symbols[e.sym as usize];
                (e.rtype, y.name.clone(), y.shndx)
            })
            .collect();
        v.sort();
        v
    };
    let mine = f_relocs(&lib_c);
    assert_eq!(mine.len(), 2, "{mine:?}");
    for (rtype, name, shndx) in &mine {
        assert_eq!((*rtype, name.as_str()), (0x2a, "big"));
        assert_eq!(
            lib_c.sections[usize::from(*shndx)].name,
            ".text.big",
            "big's symbol is defined"
        );
    }
    assert_eq!(
        lib_c.symbols.iter().filter(|y| y.name == "big").count(),
        1,
        "one symbol for big"
    );
    let info = lib_c.section(".nv.info.f").expect(".nv.info.f");
    let externs = leafold::cubin::eiattr::decode(".nv.info.f", &info.data)
        .unwrap()
        .iter()
        .any(|a| a.code() == 0x0f);
    assert!(!externs, "big is no extern of f");
    let call = "    st.param.b32 [a0], %r2;\n    call.uni (r0), f, (a0);\n\
        ld.param.b32 %r5, [r0];\n    }\n    st.global.u32 [%rd3], %r5;\n";
    let call = format!("    {{\n    .param .b32 a0; .param .b32 r0;\n{call}");
    let main = object(
        "objf_jcal_main",
        &common::warp_kernel::kernel(&format!(".extern .func {sig};"), &call),
    );
    let linked = link_functions(&main, &lib_c, &["f", "big"]);
    let whole = common::warp_kernel::kernel(&format!("{big}{TWICE}.func {sig}\n{body}"), &call);
    let module = common::ir_module("objf_jcal_whole.ptx", whole);
    sim_matches_eval(&module, &linked);
    if let Some(oracle) = Oracle::for_test("objf_jcal") {
        let theirs = cubin::read(&oracle.ptxas(&lib_src, "sm_50", &["-c"]).unwrap()).unwrap();
        let kinds = |v: Vec<(u32, String, u16)>| -> Vec<(u32, String)> {
            let mut v: Vec<(u32, String)> = v.into_iter().map(|(t, n, _)| (t, n)).collect();
            v.dedup();
            v
        };
        let theirs_big: Vec<(u32, String)> = kinds(f_relocs(&theirs))
            .into_iter()
            .filter(|(_, n)| n == "big")
            .collect();
        assert_eq!(kinds(mine), theirs_big);
    }
}
