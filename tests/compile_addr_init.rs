//! Addresses of variables in initializers (`.global .u64 p = x;`, `generic(x)`, `x + 8`,
//! arrays and vectors of them, `.const` ones, 32-bit modules, `mask()` bytes), end to end, one
//! PTX file per behaviour in `tests/data/addr_init/` (each says what it pins down):
//!
//! 1. our cubin carries the data relocations ptxas 11.8 writes for the same PTX: the same
//!    relocation type, against the same symbol, at the same place *within the same variable*,
//!    with the same addend, in a `.rel` section when the addend is zero and a `.rela` one
//!    otherwise (variables are laid out differently, so section offsets are compared relative
//!    to the variable that holds them); the relocated bytes are zero. The one deliberate
//!    difference: a 4-byte element gets `R_CUDA_G32`, where ptxas writes `R_CUDA_G64` (see
//!    `addr32.ptx`);
//! 2. cuobjdump (`-sass`, `-elf`) and nvdisasm accept the cubin and print our listing;
//! 3. `ir::eval` and the simulator running our cubin (which applies the data relocations as
//!    a loader does) write the same bytes, module memory included, and the expected values;
//! 4. every construct leafold rejects (`tests/data/addr_init/reject/`) gets its exact
//!    diagnostic and caret; where ptxas rejects it too, so it does, and where leafold only
//!    lacks support (kernel addresses), ptxas accepts it. (A function's address in an
//!    initializer compiles now: its value, `tests/compile_indirect.rs`.)

mod common;

use leafold::cubin::{self, Cubin};
use leafold::driver::{compile, Emit, Options, R_CUDA_G32, R_CUDA_G64, R_CUDA_G8_0};
use leafold::ir::eval::{self, GlobalRegion, Launch, MODULE_GLOBAL_BASE, MODULE_GLOBAL_BASE_32};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;

const OUT: u64 = 0x1000_0000;
const FILES: [&str; 5] = [
    "global_pointers",
    "const_pointers",
    "addr32",
    "mask",
    "kernel_scope",
];

fn source(path: &str) -> String {
    let p = format!(
        "{}/tests/data/addr_init/{path}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn opts(name: &str) -> Options {
    Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// One data relocation, independent of where the variables lie.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct DataReloc {
    /// `.nv.global.init` or `.nv.constant3`.
    section: String,
    rela: bool,
    rtype: u32,
    symbol: String,
    /// The variable holding the relocated bytes, and their offset in it.
    var: String,
    offset: u64,
    addend: i64,
}

/// A kernel-scope variable's name without ptxas's (`$__y__12`) or leafold's
/// (`kernel_scope.y`) decoration.
fn plain(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("$__") {
        if let Some((n, _)) = rest.rsplit_once("__") {
            return n.to_string();
        }
    }
    name.rsplit('.').next().unwrap_or(name).to_string()
}

/// The data relocations of a cubin, sorted; also checks that every relocated byte is zero.
fn data_relocs(c: &Cubin) -> Vec<DataReloc> {
    let mut v = Vec::new();
    for rs in &c.relocations {
        let target = &c.sections[rs.target];
        if !matches!(target.name.as_str(), ".nv.global.init" | ".nv.constant3") {
            continue;
        }
        let rela = c.sections[rs.section].name.starts_with(".rela");
        for r in &rs.relocs {
            let holder = c
                .symbols
                .iter()
                .find(|s| {
                    usize::from(s.shndx) == rs.target
                        && s.size > 0
                        && (s.value..s.value + s.size).contains(&r.offset)
                })
                .unwrap_or_else(|| panic!("no variable holds {:#x} of {}", r.offset, target.name));
            let width = match r.rtype {
                R_CUDA_G64 => 8,
                R_CUDA_G32 => 4,
                _ => 1,
            };
            let at = r.offset as usize;
            // ptxas writes G64 into 4-byte variables: only the variable's own bytes.
            let end = (at + width).min((holder.value + holder.size) as usize);
            assert!(
                target.data[at..end].iter().all(|&b| b == 0),
                "relocated bytes at {at:#x} of {} are not zero",
                target.name
            );
            v.push(DataReloc {
                section: target.name.clone(),
                rela,
                rtype: r.rtype,
                symbol: plain(&c.symbols[r.sym as usize].name),
                var: plain(&holder.name),
                offset: r.offset - holder.value,
                addend: r.addend.unwrap_or(0),
            });
        }
    }
    v.sort();
    v
}

/// Compile `name`, check the code's hazards, and run it on one thread with `ir::eval` and
/// with the simulator on our cubin; the two must write the same bytes. Returns the output
/// buffer (64 bytes at OUT) and the module-global region.
fn run_both(name: &str) -> (Vec<u8>, Vec<u8>) {
    let src = source(name);
    let module = common::ir_module(format!("{name}.ptx"), &src);
    let out = compile(&src, &opts(name))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).unwrap();
    let errs = check_code(&c.kernels[0].code);
    assert!(errs.is_empty(), "{name}: {errs:#?}\n{}", out.sass);
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = if module.addr32 {
        (OUT as u32).to_le_bytes().to_vec()
    } else {
        OUT.to_le_bytes().to_vec()
    };
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 64],
    }];
    let kernel = &module.functions[0].name;
    let reference =
        eval::run(&module, kernel, &launch).unwrap_or_else(|e| panic!("{name}: eval: {e}"));
    let ours = sim::run_cubin(&out.cubin, kernel, &launch)
        .unwrap_or_else(|e| panic!("{name}: sim: {e}\n{}", out.sass));
    assert_eq!(ours, reference, "{name}\n{}", out.sass);
    let base = if module.addr32 {
        MODULE_GLOBAL_BASE_32
    } else {
        MODULE_GLOBAL_BASE
    };
    (
        ours.region(OUT).unwrap().to_vec(),
        ours.region(base).unwrap().to_vec(),
    )
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

#[test]
fn global_pointers_load_through_relocated_addresses() {
    let (out, module) = run_both("global_pointers");
    let words: Vec<u32> = (0..8).map(|k| u32_at(&out, 4 * k)).collect();
    assert_eq!(words, [22, 33, 44, 66, 22, 66, 44, 55]);
    assert_eq!(u64_at(&out, 32), (-4i64) as u64);
    assert_eq!(u64_at(&out, 40), 1 << 32);
    assert_eq!(u64_at(&out, 48), 4);
    // x is the first variable: its address is the module base.
    assert_eq!(u64_at(&out, 56), MODULE_GLOBAL_BASE);
    // Stored through p: x[3] = x[0] + 100.
    assert_eq!(u32_at(&module, 12), 111);
}

#[test]
fn const_pointers_are_offsets_or_relocated_generic_addresses() {
    let (out, _) = run_both("const_pointers");
    let words: Vec<u32> = (0..5).map(|k| u32_at(&out, 4 * k)).collect();
    assert_eq!(words, [33, 7, 6, 8, 5]);
    // cv lies at 8 of the const space (after cp); cq = cv + 4.
    assert_eq!(u64_at(&out, 24), 8);
    assert_eq!(u64_at(&out, 32), 12);
    assert_eq!(u64_at(&out, 40), 4);
    // The plain offset is data, not a relocation; the bank-3 pointer to x is relocated.
    let c = cubin::read(
        &compile(&source("const_pointers"), &opts("c"))
            .unwrap()
            .cubin,
    )
    .unwrap();
    let init = c.global_init().unwrap();
    let pc = c.symbols.iter().find(|s| s.name == "pc").unwrap();
    assert_eq!(u64_at(init, pc.value as usize), 8);
    let r = data_relocs(&c);
    assert!(r.iter().any(|d| d.section == ".nv.constant3"
        && d.var == "cp"
        && d.symbol == "x"
        && d.addend == 8
        && d.rela));
    assert!(!r.iter().any(|d| d.var == "pc" || d.var == "cq"), "{r:#?}");
}

#[test]
fn a_32_bit_module_relocates_4_byte_pointers() {
    let (out, _) = run_both("addr32");
    let words: Vec<u32> = (0..8).map(|k| u32_at(&out, 4 * k)).collect();
    assert_eq!(
        words,
        [22, 22, 33, 44, 33, 4, 0, MODULE_GLOBAL_BASE_32 as u32]
    );
    let c = cubin::read(&compile(&source("addr32"), &opts("addr32")).unwrap().cubin).unwrap();
    for d in data_relocs(&c) {
        let want = if d.var == "w" { R_CUDA_G64 } else { R_CUDA_G32 };
        assert_eq!(d.rtype, want, "{d:?}");
    }
}

#[test]
fn mask_bytes_rebuild_the_address() {
    let (out, _) = run_both("mask");
    assert_eq!(u32_at(&out, 0), 33);
    assert_eq!(u64_at(&out, 8), MODULE_GLOBAL_BASE);
    assert_eq!(u32_at(&out, 16), (MODULE_GLOBAL_BASE + 4) as u32 & 0xff);
    assert_eq!(u32_at(&out, 20), (MODULE_GLOBAL_BASE >> 32) as u32 & 0xff);
    let c = cubin::read(&compile(&source("mask"), &opts("mask")).unwrap().cubin).unwrap();
    let bytes: Vec<(u64, u32)> = data_relocs(&c)
        .iter()
        .filter(|d| d.var == "b")
        .map(|d| (d.offset, d.rtype))
        .collect();
    let want: Vec<(u64, u32)> = (0..8).map(|k| (k, R_CUDA_G8_0 + k as u32)).collect();
    assert_eq!(bytes, want);
}

#[test]
fn kernel_scope_initializers_name_module_and_kernel_variables() {
    let (out, _) = run_both("kernel_scope");
    assert_eq!((u32_at(&out, 0), u32_at(&out, 4)), (4, 2));
}

/// The IR shows the addresses (and `eval` needs no cubin to see them).
#[test]
fn the_ir_lists_each_address() {
    let src = source("global_pointers");
    let module = common::ir_module("global_pointers.ptx", &src);
    let text = module.to_string();
    assert!(
        text.contains(
            ".global @tab: 24 bytes, align 8, init [00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00], addresses [+0: u64 @y, +8: u64 @x + 4, +16: u64 generic(@y) + 4]"
        ),
        "{text}"
    );
    assert!(text.contains("addresses [+0: u64 @x - 4]"), "{text}");
}

#[test]
fn relocations_match_ptxas_and_nvidia_tools_accept_the_cubins() {
    let Some(oracle) = Oracle::for_test("compile_addr_init") else {
        return;
    };
    for name in FILES {
        let src = source(name);
        let out = compile(&src, &opts(name)).unwrap();
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
        let elf = oracle
            .cuobjdump(&out.cubin, "-elf")
            .unwrap_or_else(|e| panic!("{name}: cuobjdump -elf rejects our cubin: {e}"));
        let c = cubin::read(&out.cubin).unwrap();
        let ours = data_relocs(&c);
        assert!(!ours.is_empty(), "{name}");
        // cuobjdump names each relocation type.
        for d in &ours {
            let t = match d.rtype {
                R_CUDA_G64 => "R_CUDA_G64".to_string(),
                R_CUDA_G32 => "R_CUDA_G32".to_string(),
                t => format!("R_CUDA_G8_{}", 8 * (t - R_CUDA_G8_0)),
            };
            assert!(elf.contains(&t), "{name}: cuobjdump -elf does not name {t}");
        }

        let theirs = common::ptxas_cached(&oracle, &src, "sm_50").unwrap();
        let theirs = data_relocs(&cubin::read(&theirs).unwrap());
        // ptxas writes R_CUDA_G64 where we write R_CUDA_G32 (4-byte elements).
        let ours: Vec<DataReloc> = ours
            .into_iter()
            .map(|mut d| {
                if d.rtype == R_CUDA_G32 {
                    d.rtype = R_CUDA_G64;
                }
                d
            })
            .collect();
        assert_eq!(ours, theirs, "{name}");
    }
}

/// Each rejected construct: file, exact diagnostic (line, column, caret), and whether ptxas
/// accepts the file (only what leafold merely does not support).
const REJECTED: &[(&str, bool, &str)] = &[
    (
        "shared_variable",
        false,
        "shared_variable.ptx:9:26: error: bad initializer: 's' is a .shared variable; only the addresses of .global and .const variables can initialize a variable
9 | .global .u64 p = generic(s);
  |                          ^
",
    ),
    (
        "kernel_address",
        true,
        "kernel_address.ptx:11:25: error: unsupported initializer: the address of kernel 'other' (a function descriptor for dynamic parallelism, R_CUDA_FUNC_DESC_64) is not emitted by leafold
11 | .global .u64 launcher = other;
   |                         ^^^^^
",
    ),
    (
        "function_generic",
        false,
        "function_generic.ptx:10:18: error: bad initializer: generic() of function 'f' (only variables have generic addresses)
10 | .global .u64 p = generic(f);
   |                  ^^^^^^^^^^
",
    ),
    (
        "function_offset",
        false,
        "function_offset.ptx:10:18: error: bad initializer: an offset cannot be added to the address of function 'f'
10 | .global .u64 p = f+16;
   |                  ^^^^
",
    ),
    (
        "signed_type",
        false,
        "signed_type.ptx:8:18: error: bad initializer: an address can only initialize a .u32 or .u64 (.u8 with a mask such as 0xff(x)) variable, not .s64
8 | .global .s64 p = x+4;
  |                  ^^^
",
    ),
    (
        "mask_type",
        false,
        "mask_type.ptx:8:18: error: bad initializer: an address can only initialize a .u8, .u32 or .u64 variable, not .u16
8 | .global .u16 p = 0xff00(x);
  |                  ^^^^^^^^^
",
    ),
    (
        "mask_value",
        false,
        "mask_value.ptx:8:30: error: bad initializer: mask 0xffff is not one byte of the address (0xff, 0xff00, ..., 0xff00000000000000)
8 | .global .u8 p[2] = {0xff(x), 0xffff(x)};
  |                              ^^^^^^^^^
",
    ),
    (
        "mask_version",
        false,
        "mask_version.ptx:8:17: error: bad initializer: mask() in an initializer requires PTX ISA 7.1 (this module is .version 7.0)
8 | .global .u8 p = 0xff(generic(x)+4);
  |                 ^^^^^^^^^^^^^^^^^^
",
    ),
    (
        "subtracted_offset",
        false,
        "subtracted_offset.ptx:8:20: error: bad initializer: an address takes an offset as 'x+offset' ('x+-4'), not 'x-offset'
8 | .global .u64 p = x - 4;
  |                    ^
",
    ),
    (
        "forward_reference",
        false,
        "forward_reference.ptx:7:26: error: bad initializer: 'x' is declared after this initializer; an initializer can only name what is declared before it
7 | .global .u64 p = generic(x);
  |                          ^
",
    ),
    (
        "self_reference",
        false,
        "self_reference.ptx:7:18: error: bad initializer: 'p' names the variable it initializes
7 | .global .u64 p = p+8;
  |                  ^
",
    ),
];

#[test]
fn rejected_initializers_name_the_construct_and_its_place() {
    let dir = format!("{}/tests/data/addr_init/reject", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut listed: Vec<String> = REJECTED.iter().map(|r| format!("{}.ptx", r.0)).collect();
    listed.sort();
    assert_eq!(files, listed, "every file in {dir} has its case here");
    let oracle = Oracle::for_test("compile_addr_init rejected");
    for (name, ptxas_accepts, want) in REJECTED {
        let src = source(&format!("reject/{name}"));
        let err = compile(&src, &opts(name)).expect_err(name);
        assert_eq!(leafold::error::render_all(&err.0), *want, "{name}");
        if let Some(o) = &oracle {
            let theirs = o.ptxas(&src, "sm_50", &[]);
            assert_eq!(
                theirs.is_ok(),
                *ptxas_accepts,
                "{name}: ptxas says {theirs:?}"
            );
        }
    }
}
