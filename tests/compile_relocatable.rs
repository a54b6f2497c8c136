//! `leafold ptxas --compile-only` (`-c`): the relocatable object (`ET_REL`) nvlink links, as
//! ptxas 11.8 writes it (`src/cubin/relocatable.rs`). Checked on its own (header, section
//! types, the call graph, symbols, `.nv.info`), against `ptxas -c` of the same PTX section by
//! section, and through the command line. Linking with nvlink is `tests/nvcc_flow.rs`.

use leafold::cubin::{self, Attribute, CubinSpec, KernelSpec, ParamSpec, RelocSpec};
use leafold::driver::{compile, Options};
use leafold::oracle::Oracle;

const ADD1: &str = r#"
.version 7.8
.target sm_50
.address_size 64
.visible .global .align 4 .u32 counter;
.global .align 4 .u32 hidden;
.visible .entry add1(.param .u64 p, .param .u32 n)
{
  .reg .b32 %r<5>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r2, %tid.x;
  add.s32 %r3, %r2, %r1;
  st.global.u32 [%rd2], %r3;
  ld.global.u32 %r4, [hidden];
  add.s32 %r4, %r4, %r3;
  st.global.u32 [counter], %r4;
  ret;
}
.visible .entry noparams()
{
  ret;
}
"#;

fn object(ptx: &str) -> Vec<u8> {
    let opts = Options {
        relocatable: true,
        ..Options::default()
    };
    compile(ptx, &opts).expect("compiles").cubin
}

fn callgraph(c: &cubin::Cubin) -> Vec<(i32, i32)> {
    c.section(".nv.callgraph")
        .expect(".nv.callgraph")
        .data
        .chunks(8)
        .map(|e| {
            (
                i32::from_le_bytes(e[..4].try_into().unwrap()),
                i32::from_le_bytes(e[4..].try_into().unwrap()),
            )
        })
        .collect()
}

#[test]
fn object_layout() {
    let c = cubin::read(&object(ADD1)).unwrap();
    assert_eq!(c.header.e_type, 1, "ET_REL");
    assert!(c.program_headers.is_empty());
    assert!(c.section(".nv.rel.action").is_none());
    let ty = |name: &str| c.section(name).unwrap_or_else(|| panic!("{name}")).sh_type;
    assert_eq!(ty(".nv.constant0.add1"), 0x7000_0064);
    assert_eq!(ty(".nv.global"), 0x7000_0007);
    assert_eq!(ty(".nv.callgraph"), 0x7000_0001);
    assert_eq!(callgraph(&c), vec![(0, -1), (0, -2), (0, -3)]);

    let sym = |name: &str| {
        let i = c
            .symbols
            .iter()
            .position(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        (i, &c.symbols[i])
    };
    let (_, param) = sym("_param");
    assert_eq!(
        (param.value, param.size, param.info, param.other),
        (0x140, 12, 0x0d, 0x81)
    );
    assert_eq!(
        c.sections[usize::from(param.shndx)].name,
        ".nv.constant0.add1"
    );
    let (_, sreg) = sym("_SREG");
    assert_eq!((sreg.value, sreg.size), (0, 0x140));
    let (_, counter) = sym("counter");
    assert_eq!(
        (counter.info, counter.other),
        (0x1d, 0x20),
        ".visible: GLOBAL, STT_CUDA_OBJECT"
    );
    let (_, hidden) = sym("hidden");
    assert_eq!(
        (hidden.info, hidden.other),
        (0x0d, 0x20),
        "not .visible: LOCAL"
    );
    // LOCAL symbols first; .symtab's sh_info is the first GLOBAL.
    let symtab = c.section(".symtab").unwrap();
    let first_global = symtab.info as usize;
    assert!(c.symbols[..first_global].iter().all(|s| s.info >> 4 == 0));
    assert!(c.symbols[first_global..].iter().all(|s| s.info >> 4 != 0));

    // Every symbol reference was renumbered: the kernel's records and its .text sh_info.
    let (k, _) = sym("add1");
    let text = c.section(".text.add1").unwrap();
    assert_eq!(text.info & 0xff_ffff, k as u32);
    assert!(c
        .info
        .iter()
        .any(|a| matches!(a, Attribute::RegCount { sym, .. } if *sym == k as u32)));
    assert!(!c
        .info
        .iter()
        .any(|a| matches!(a, Attribute::MinStackSize { .. })));
    let kernel = c.kernels.iter().find(|x| x.name == "add1").unwrap();
    let (c0, _) = sym(".nv.constant0.add1");
    assert!(kernel
        .info
        .iter()
        .any(|a| matches!(a, Attribute::ParamCbank { sym, .. } if *sym == c0 as u32)));
    // Relocations name the same variables as before.
    let relocs: Vec<&str> = c
        .relocations
        .iter()
        .flat_map(|r| {
            r.relocs
                .iter()
                .map(|e| c.symbols[e.sym as usize].name.as_str())
        })
        .collect();
    assert!(
        relocs.contains(&"counter") && relocs.contains(&"hidden"),
        "{relocs:?}"
    );
}

/// A call to an undefined function (as the call code generation writes it): an edge in the
/// call graph and the callee in `EIATTR_EXTERNS`.
#[test]
fn calls_become_callgraph_edges_and_externs() {
    let mut k = KernelSpec::new("k", vec![0; 8], 8);
    k.params = vec![ParamSpec {
        offset: 0,
        size: 8,
        pointee: 0,
    }];
    k.exit_offsets = vec![0x30];
    k.relocs = vec![
        RelocSpec {
            offset: 0x18,
            symbol: "vprintf".into(),
            rtype: 0x2a,
        },
        RelocSpec {
            offset: 0x28,
            symbol: "malloc".into(),
            rtype: 0x2a,
        },
    ];
    let exec = cubin::write(&CubinSpec {
        arch: 50,
        ptx_arch: 50,
        address_bits: 64,
        kernels: vec![k],
        constant3: None,
        global_init: None,
        global: None,
        strtab_order: None,
        // Undefined GLOBAL functions.
        handles: vec![("vprintf".into(), 0x12), ("malloc".into(), 0x12)],
        symbol_order: None,
        abi_version: 7,
        texmode_independent: false,
        samplers: Vec::new(),
        data_relocs: Vec::new(),
        object_shared: None,
    });
    let c = cubin::read(&cubin::relocatable(&exec, &[]).unwrap()).unwrap();
    let idx = |n: &str| c.symbols.iter().position(|s| s.name == n).unwrap() as i32;
    assert_eq!(
        callgraph(&c),
        vec![
            (0, -1),
            (idx("k"), idx("vprintf")),
            (idx("k"), idx("malloc")),
            (0, -2),
            (0, -3)
        ]
    );
    let kernel = &c.kernels[0];
    let externs: Vec<&Attribute> = kernel.info.iter().filter(|a| a.code() == 0x0f).collect();
    assert_eq!(externs.len(), 1);
    let want: Vec<u8> = [idx("vprintf"), idx("malloc")]
        .iter()
        .flat_map(|i| (*i as u32).to_le_bytes())
        .collect();
    assert_eq!(externs[0].payload(), want);
    // Before the EXIT offsets, as ptxas.
    let at = |code: u8| kernel.info.iter().position(|a| a.code() == code).unwrap();
    assert!(at(0x0f) < at(0x1c));

    // Converting an object again is refused (it is not an executable).
    let again = cubin::relocatable(&cubin::relocatable(&exec, &[]).unwrap(), &[]);
    assert!(again.is_err());
}

/// Section for section against `ptxas -c` of the same PTX: the same sections with the same
/// types, flags, links, alignment and entry sizes; the same symbols with the same binding,
/// type, `st_other` and section; the same module records.
#[test]
fn sections_and_symbols_equal_ptxas() {
    let Some(oracle) = Oracle::for_test("compile_relocatable::sections_and_symbols_equal_ptxas")
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("leafold_relocatable_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("add1.ptx");
    std::fs::write(&ptx, ADD1).unwrap();
    let theirs = dir.join("add1.o");
    oracle
        .run(
            &oracle.ptxas,
            &[
                "-arch=sm_50".as_ref(),
                "-c".as_ref(),
                ptx.as_os_str(),
                "-o".as_ref(),
                theirs.as_os_str(),
            ],
        )
        .unwrap();
    let theirs = cubin::read(&std::fs::read(&theirs).unwrap()).unwrap();
    let ours = cubin::read(&object(ADD1)).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(ours.header.e_type, theirs.header.e_type);
    assert_eq!(ours.header.flags, theirs.header.flags);
    assert_eq!(ours.header.abi_version, theirs.header.abi_version);
    let sections = |c: &cubin::Cubin| -> Vec<(String, u32, u64, u32, u64, u64)> {
        c.sections
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.sh_type,
                    s.flags,
                    s.link,
                    s.align,
                    s.entsize,
                )
            })
            .collect()
    };
    assert_eq!(sections(&ours), sections(&theirs));
    let symbols = |c: &cubin::Cubin| -> Vec<(String, u8, u8, String)> {
        let mut v: Vec<_> = c
            .symbols
            .iter()
            .map(|s| {
                let section = c
                    .sections
                    .get(usize::from(s.shndx))
                    .map_or(String::new(), |x| x.name.clone());
                (s.name.clone(), s.info, s.other, section)
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(symbols(&ours), symbols(&theirs));
    assert_eq!(callgraph(&ours), callgraph(&theirs));
    let codes = |c: &cubin::Cubin| c.info.iter().map(|a| a.code()).collect::<Vec<_>>();
    assert_eq!(codes(&ours), codes(&theirs));
}

/// The command line: `-c` and `--compile-only` write the object, without a warning; the
/// default stays an executable.
#[test]
fn command_line_spellings() {
    let dir = std::env::temp_dir().join(format!("leafold_relocatable_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("add1.ptx");
    std::fs::write(&ptx, ADD1).unwrap();
    for (flag, e_type) in [
        (Some("-c"), 1),
        (Some("--compile-only"), 1),
        (Some("-compile-only"), 1),
        (None, 2),
    ] {
        let out = dir.join("out.cubin");
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_leafold"));
        cmd.args(["ptxas", "-arch=sm_50", "-m64"]);
        if let Some(f) = flag {
            cmd.arg(f);
        }
        let r = cmd.arg(&ptx).arg("-o").arg(&out).output().unwrap();
        assert!(
            r.status.success(),
            "{flag:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(
            r.stderr.is_empty(),
            "{flag:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let c = cubin::read(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(c.header.e_type, e_type, "{flag:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// ptxas refuses `-c` below PTX ISA 3.1; so does leafold, at the `.version` line.
#[test]
fn compile_only_needs_ptx_3_1() {
    let old = ADD1.replace(".version 7.8", ".version 3.0");
    let opts = Options {
        relocatable: true,
        file_name: "old.ptx".into(),
        ..Options::default()
    };
    let Err(e) = compile(&old, &opts) else {
        panic!("PTX 3.0 with -c compiled")
    };
    let text = e.0[0].to_string();
    assert!(text.contains("requires PTX ISA .version 3.1"), "{text}");
    assert!(text.contains("old.ptx:2:"), "{text}");
    let ok = ADD1.replace(".version 7.8", ".version 3.1");
    assert!(compile(&ok, &opts).is_ok());
    // The whole-program compile takes it.
    assert!(compile(&old, &Options::default()).is_ok());
}
