//! Corrupt and truncated cubins must give a `CubinError`, never a panic (and never a huge
//! allocation: the reader only copies bytes it has bounds-checked against the input).
//!
//! The base file comes from our writer (no oracle needed): two kernels with parameters,
//! shared memory, constant banks 2 and 3, global data, relocations and info records of every
//! typed kind, so that every reader path sees corrupted input.

use leafold::cubin::{
    self, Attribute, BranchTargets, CubinSpec, DataSpec, KernelSpec, ParamSpec, RelocSpec,
};
use proptest::prelude::*;

fn base() -> Vec<u8> {
    let code = vec![
        0x001fbc00fde007f6,
        0x4c98078000870001,
        0x50b0000000070f00,
        0x50b0000000070f00,
        0x001ffc00ffe007ed,
        0x50b0000000070f00,
        0xe30000000007000f,
        0xe2400fffff87000f,
    ];
    let mut a = KernelSpec::new("a", code.clone(), 8);
    a.params = vec![
        ParamSpec {
            offset: 0,
            size: 8,
            pointee: 0,
        },
        ParamSpec {
            offset: 8,
            size: 4,
            pointee: 0,
        },
    ];
    a.exit_offsets = vec![0x30];
    a.s2r_ctaid_offsets = vec![0x10];
    a.crs_stack_size = Some(0x20);
    a.indirect_branch_targets = vec![BranchTargets {
        offset: 0x18,
        kind: 0,
        targets: vec![0x28],
    }];
    a.extra_info = vec![Attribute::Other {
        format: cubin::Format::Sval,
        code: 0x31,
        payload: vec![8, 0, 0, 0],
    }];
    a.relocs = vec![RelocSpec {
        offset: 0x10,
        symbol: "g".into(),
        rtype: 0x2b,
    }];
    let mut b = KernelSpec::new("b", code, 4);
    b.visible = false;
    b.shared = Some((64, 16));
    b.barriers = 1;
    b.frame_size = 16;
    b.min_stack_size = 16;
    b.constant2 = Some(vec![1, 2, 3, 4]);
    cubin::write(&CubinSpec {
        arch: 52,
        ptx_arch: 52,
        address_bits: 64,
        kernels: vec![a, b],
        constant3: Some(DataSpec {
            size: 8,
            align: 4,
            init: vec![9; 8],
            symbols: vec![("c".into(), 0, 8)],
        }),
        global_init: Some(DataSpec {
            size: 4,
            align: 4,
            init: vec![1, 0, 0, 0],
            symbols: vec![("g".into(), 0, 4)],
        }),
        global: Some(DataSpec {
            size: 32,
            align: 8,
            init: vec![],
            symbols: vec![("z".into(), 0, 32)],
        }),
        strtab_order: None,
        handles: Vec::new(),
        symbol_order: None,
        abi_version: 7,
        texmode_independent: false,
        samplers: Vec::new(),
        data_relocs: Vec::new(),
        object_shared: None,
    })
}

/// Everything a caller might do with a successfully read (possibly corrupted) cubin.
fn exercise(bytes: &[u8]) -> Result<(), cubin::CubinError> {
    let c = cubin::read(bytes)?;
    let _ = cubin::dump_info(&c);
    let _ = c.header_flags_text();
    let _ = CubinSpec::from_cubin(&c);
    Ok(())
}

#[test]
fn base_file_reads() {
    let b = base();
    let c = cubin::read(&b).unwrap();
    assert_eq!(c.kernels.len(), 2);
    assert_eq!(c.relocations.len(), 1);
    assert_eq!(cubin::write(&CubinSpec::from_cubin(&c)), b);
}

#[test]
fn every_truncation_is_an_error() {
    let b = base();
    // Program headers sit at the very end, so no strict prefix is a complete file.
    for n in 0..b.len() {
        let err = cubin::read(&b[..n]).expect_err("a truncated cubin must not read");
        assert!(!err.to_string().is_empty());
    }
    let phoff = u64::from_le_bytes(b[32..40].try_into().unwrap());
    assert_eq!(
        cubin::read(&b[..100]).unwrap_err().to_string(),
        format!(
            "truncated: program header table needs bytes {:#x}..{:#x} but the file has 0x64",
            phoff,
            phoff + 4 * 56
        )
    );
    assert_eq!(
        cubin::read(b"\x7fELX").unwrap_err(),
        cubin::CubinError::NotElf
    );
}

/// Found by the `cubin_read` fuzz target: a section size near `u64::MAX` overflowed the
/// running total of copied bytes before the bounds check.
#[test]
fn huge_section_size_is_an_error() {
    let mut b = base();
    let shoff = u64::from_le_bytes(b[40..48].try_into().unwrap()) as usize;
    let size_field = shoff + 64 + 32; // section 1 (.shstrtab), field sh_size
    b[size_field..size_field + 8].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
    let err = cubin::read(&b).unwrap_err();
    assert!(err.to_string().contains("section 1 contents"), "{err}");
    // Every other section too, with the largest sizes.
    for i in 1..u16::from_le_bytes(b[60..62].try_into().unwrap()) as usize {
        let mut c = base();
        let f = shoff + 64 * i + 32;
        c[f..f + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let _ = exercise(&c);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_byte_flips_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut b = base();
        for (at, v) in flips {
            let i = at % b.len();
            b[i] ^= v | 1;
        }
        let _ = exercise(&b);
    }

    #[test]
    fn flips_in_headers_and_tables_never_panic(
        flips in proptest::collection::vec((0usize..0x600, any::<u8>()), 1..4),
        cut in 0usize..64,
    ) {
        // Concentrate on the ELF header, string tables, symbols and .nv.info (the first
        // bytes), and on the section/program header tables at the end.
        let mut b = base();
        let len = b.len();
        for (at, v) in flips {
            let i = if at < 0x300 { at } else { len - 1 - (at - 0x300) % (len / 2) };
            b[i] = v;
        }
        b.truncate(len - cut);
        let _ = exercise(&b);
    }
}
