//! Hand-made kernels through control codes, layout and `cubin::write`, checked against
//! NVIDIA's tools: `cuobjdump -sass` accepts the cubin, `nvdisasm -b SM50` accepts the raw
//! words (so every control field is legal), and both print, line for line, exactly what our
//! printer prints. The independent hazard checker must pass on the same code.

mod common;

use leafold::cubin::{self, CubinSpec, KernelSpec, ParamSpec};
use leafold::oracle::Oracle;
use leafold::sm50::sched::bundle::{exit, layout, Body, Laid};
use leafold::sm50::sched::check::check_hazards;
use leafold::sm50::sched::Mode;
use leafold::sm50::{self, Ctrl, Field, Form, Inst};

fn mov_c(d: u64, off: u64) -> Inst {
    Inst::new(Form::MOV_C)
        .with(Field::Rd, d)
        .with(Field::Cbo, off / 4)
}

/// `out[0] = A[i + 10]` as ptxas compiles it (seed a_i_plus_10): a LEA/LEA.HI.X chain, the
/// Plg predicate feeding the generic load, and a global store.
fn lea_chain() -> Body {
    let insts = vec![
        mov_c(3, 0x148),
        mov_c(2, 0x14c),
        Inst::new(Form::LEA_C)
            .with(Field::Rd, 0)
            .with(Field::Ra, 3)
            .with(Field::Cbo, 0x140 / 4)
            .with(Field::S, 3)
            .with(Field::Cc, 1),
        Inst::new(Form::LEA_HI_C)
            .with(Field::Rd, 3)
            .with(Field::Ra, 3)
            .with(Field::Cbo, 0x144 / 4)
            .with(Field::Rc, 2)
            .with(Field::S, 3)
            .with(Field::X, 1),
        Inst::new(Form::LEA_I)
            .with(Field::Rd, 2)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 0x50)
            .with(Field::Cc, 1),
        Inst::new(Form::LEA_HI_R)
            .with(Field::Plg, 0)
            .with(Field::Rd, 3)
            .with(Field::Ra, 0)
            .with(Field::Rb, 255)
            .with(Field::Rc, 3)
            .with(Field::X, 1),
        Inst::new(Form::LD)
            .with(Field::Rd, 2)
            .with(Field::Ra, 2)
            .with(Field::E, 1)
            .with(Field::Size, 5)
            .with(Field::P, 0),
        mov_c(4, 0x150),
        mov_c(5, 0x154),
        Inst::new(Form::STG)
            .with(Field::Rd, 2)
            .with(Field::Ra, 4)
            .with(Field::E, 1)
            .with(Field::Size, 5),
        // Overwrite the stored register right away: needs the store's read scoreboard.
        mov_c(2, 0x140),
        Inst::new(Form::STG)
            .with(Field::Rd, 2)
            .with(Field::Ra, 4)
            .with(Field::Off, 8)
            .with(Field::E, 1)
            .with(Field::Size, 4),
        exit(),
    ];
    Body {
        targets: vec![None; insts.len()],
        insts,
    }
}

/// `if (tid.x < n) out[tid.x] = in[tid.x] + 1` with a loop-free guard branch, a predicate
/// feeding a branch and a guarded instruction, S2R, LDG/STG and an early EXIT.
fn guarded_copy() -> Body {
    let insts = vec![
        /* 0 */
        Inst::new(Form::S2R)
            .with(Field::Rd, 0)
            .with(Field::Sr, 0x21),
        /* 1 */
        Inst::new(Form::ISETP_C)
            .with(Field::Pd0, 0)
            .with(Field::Ra, 0)
            .with(Field::Cbo, 0x150 / 4)
            .with(Field::Cmp, 6) // GE
            .with(Field::Sgn, 0),
        /* 2 */ Inst::new(Form::BRA).with(Field::Pg, 0),
        /* 3 */
        Inst::new(Form::LEA_C)
            .with(Field::Rd, 2)
            .with(Field::Ra, 0)
            .with(Field::Cbo, 0x140 / 4)
            .with(Field::S, 2)
            .with(Field::Cc, 1),
        /* 4 */
        Inst::new(Form::LEA_HI_C)
            .with(Field::Rd, 3)
            .with(Field::Ra, 0)
            .with(Field::Cbo, 0x144 / 4)
            .with(Field::Rc, 255)
            .with(Field::S, 2)
            .with(Field::X, 1),
        /* 5 */
        Inst::new(Form::LDG)
            .with(Field::Rd, 4)
            .with(Field::Ra, 2)
            .with(Field::E, 1)
            .with(Field::Size, 4),
        /* 6 */
        Inst::new(Form::ISETP_I)
            .with(Field::Pd0, 1)
            .with(Field::Ra, 0)
            .with(Field::Cmp, 2), // EQ 0
        /* 7 */
        Inst::new(Form::IADD32I)
            .with(Field::Rd, 4)
            .with(Field::Ra, 4)
            .with(Field::Imm, 1),
        /* 8 */
        Inst::new(Form::IADD32I)
            .with(Field::Pg, 1)
            .with(Field::Rd, 4)
            .with(Field::Ra, 4)
            .with(Field::Imm, 1),
        /* 9 */
        Inst::new(Form::STG)
            .with(Field::Rd, 4)
            .with(Field::Ra, 2)
            .with(Field::E, 1)
            .with(Field::Size, 4),
        /* 10 */ exit(),
    ];
    let mut targets = vec![None; insts.len()];
    targets[2] = Some(10);
    Body { insts, targets }
}

fn ours(laid: &Laid) -> Vec<(u64, String)> {
    laid.placed
        .iter()
        .map(|p| (p.addr, sm50::print(&p.inst, p.addr, p.ctrl.reuse)))
        .collect()
}

fn hazards(laid: &Laid) -> Vec<String> {
    let live = laid.placed.len()
        - laid
            .placed
            .iter()
            .rev()
            .take_while(|p| p.inst.form == Form::NOP)
            .count();
    let insts: Vec<Inst> = laid.placed[..live].iter().map(|p| p.inst).collect();
    let ctrl: Vec<Ctrl> = laid.placed[..live].iter().map(|p| p.ctrl).collect();
    check_hazards(&insts, &ctrl, &laid.targets)
}

fn check_kernel(oracle: &Oracle, name: &str, body: &Body, params: Vec<ParamSpec>) {
    for mode in [Mode::Normal, Mode::Serial] {
        let laid = layout(body, mode).unwrap();
        let errs = hazards(&laid);
        assert!(errs.is_empty(), "{name} {mode:?}: {errs:#?}");

        // Raw words: nvdisasm accepts every control field and prints what we print.
        let raw = oracle
            .nvdisasm_raw(&laid.code)
            .expect("nvdisasm accepts the code");
        assert_eq!(
            common::parse_lines(&raw),
            ours(&laid),
            "{name} {mode:?}: nvdisasm text"
        );

        // The cubin: cuobjdump accepts it and lists the same instructions.
        let mut k = KernelSpec::new(name, laid.code.clone(), 8);
        k.params = params.clone();
        k.exit_offsets = laid.exit_offsets.clone();
        k.s2r_ctaid_offsets = laid.s2r_ctaid_offsets.clone();
        let spec = CubinSpec {
            arch: 50,
            ptx_arch: 50,
            address_bits: 64,
            kernels: vec![k],
            constant3: None,
            global_init: None,
            global: None,
            strtab_order: None,
            handles: Vec::new(),
            symbol_order: None,
            abi_version: 7,
            texmode_independent: false,
            samplers: Vec::new(),
            data_relocs: Vec::new(),
            object_shared: None,
        };
        let bytes = cubin::write(&spec);
        let sass = oracle
            .cuobjdump(&bytes, "-sass")
            .expect("cuobjdump accepts the cubin");
        assert!(sass.contains(&format!("Function : {name}")), "{sass}");
        assert_eq!(
            common::parse_lines(&sass),
            ours(&laid),
            "{name} {mode:?}: cuobjdump text"
        );
        // Every control word appears as cuobjdump prints it.
        for b in laid.code.chunks(4) {
            assert!(sass.contains(&format!("/* {:#018x} */", b[0])), "{sass}");
        }
    }
}

#[test]
fn lea_chain_kernel_is_accepted_and_printed_identically() {
    let Some(oracle) = Oracle::for_test("emit_oracle") else {
        return;
    };
    let params = vec![
        ParamSpec {
            offset: 0,
            size: 8,
            pointee: 0,
        },
        ParamSpec {
            offset: 8,
            size: 8,
            pointee: 0,
        },
        ParamSpec {
            offset: 16,
            size: 8,
            pointee: 0,
        },
    ];
    check_kernel(&oracle, "lea_chain", &lea_chain(), params);
}

#[test]
fn branching_kernel_is_accepted_and_printed_identically() {
    let Some(oracle) = Oracle::for_test("emit_oracle") else {
        return;
    };
    let params = vec![
        ParamSpec {
            offset: 0,
            size: 8,
            pointee: 0,
        },
        ParamSpec {
            offset: 8,
            size: 8,
            pointee: 0,
        },
        ParamSpec {
            offset: 16,
            size: 4,
            pointee: 0,
        },
    ];
    check_kernel(&oracle, "guarded_copy", &guarded_copy(), params);
}

/// The control codes of the LEA chain, read as ptxas's fields: what must hold for the model.
#[test]
fn lea_chain_control_fields() {
    // The fields of this instruction order (InOrder: the positions below are fixed).
    let laid = layout(&lea_chain(), Mode::InOrder).unwrap();
    let p = &laid.placed;
    // [0] MOV R1 prologue, [1..] the body.
    let ld = &p[7];
    assert_eq!(ld.inst.form, Form::LD);
    // LEA.HI.X P0 → LD with P0: 13 cycles, predicate writer with a long stall: bit 4 clear.
    assert_eq!(p[6].ctrl.stall, 13);
    assert!(!p[6].ctrl.yield_);
    // The load takes a write scoreboard; the STG of its result waits on it.
    let wb = ld.ctrl.wbar.expect("load result scoreboard");
    let stg = &p[10];
    assert_eq!(stg.inst.form, Form::STG);
    assert_ne!(stg.ctrl.wait & (1 << wb), 0);
    // The store's data is overwritten by the next MOV: read scoreboard and wait.
    let rb = stg.ctrl.rbar.expect("store read scoreboard");
    assert_ne!(p[11].ctrl.wait & (1 << rb), 0);
    // LEA.CC → LEA.HI.X needs 6 cycles.
    assert!(p[3].ctrl.stall >= 6);
}
