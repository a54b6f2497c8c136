//! Kernels whose registers cost them warps against ptxas (issue 23), reduced to the cause, on
//! PTX shaped as NVVM writes it (`tests/data/occupancy/*.ptx`, each opening with a comment
//! that says what it pins): the registers stay at or below the occupancy step ptxas reaches
//! (32 registers: 64 warps per SM; 33 to 40: 48), the shape that keeps them there, and
//! `ir::eval` against the simulator running our code on random inputs (`verify`).

#[path = "common/frame_ir.rs"]
mod frame_ir;

use leafold::driver::{compile, Emit};

/// The registers of the file's first kernel and its SASS; the kernel must not have bought
/// them with spills (no stack frame).
fn registers_and_sass(file: &str) -> (u32, String) {
    let (frame, ir) = frame_ir::frame_and_ir("occupancy", file);
    assert_eq!(frame, 0, "{file} spills:\n{ir}");
    let ptx = frame_ir::read("occupancy", file);
    let out = compile(&ptx, &frame_ir::options(file, Emit::Cubin))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let sass = compile(&ptx, &frame_ir::options(file, Emit::Sass))
        .unwrap()
        .text;
    (out.kernels[0].registers, sass)
}

/// The most registers that keep all 64 warps of an SM resident (sm_50: 64K registers).
const FULL_OCCUPANCY: u32 = 32;

#[test]
fn const_coefficients_are_operands_not_live_registers() {
    let (regs, sass) = registers_and_sass("const_coeffs.ptx");
    // Every coefficient is read where it is used: no LDC (nor a MOV from bank 3) holds one.
    assert!(!sass.contains("LDC"), "{sass}");
    let ffma_c3 = sass
        .lines()
        .filter(|l| l.contains("FFMA") && l.contains("c[0x3]"))
        .count();
    assert!(
        ffma_c3 >= 17 * 4 - 4,
        "{ffma_c3} FFMAs read bank 3:\n{sass}"
    );
    // 17 coefficients held in registers made 48.
    assert!(regs <= FULL_OCCUPANCY, "{regs} registers:\n{sass}");
    frame_ir::assert_eval_matches_sim("occupancy", "const_coeffs.ptx");
}

#[test]
fn f64_division_reuses_its_dead_temporaries() {
    let (regs, sass) = registers_and_sass("ddiv_live.ptx");
    assert!(sass.contains("MUFU.RCP64H"), "{sass}");
    // Nine temporary pairs made 37 registers (ptxas: 28).
    assert!(regs <= FULL_OCCUPANCY, "{regs} registers:\n{sass}");
    frame_ir::assert_eval_matches_sim("occupancy", "ddiv_live.ptx");
}

/// Register-to-register moves in `sass` (`MOV Ra, Rb`).
fn register_moves(sass: &str) -> usize {
    sass.lines()
        .filter_map(|l| l.split_once("MOV R"))
        .filter(|(_, rest)| {
            let operands = rest.split(';').next().unwrap_or("");
            operands.split(", ").nth(1).is_some_and(|src| {
                src.trim().starts_with('R') && src.trim()[1..].chars().all(|c| c.is_ascii_digit())
            })
        })
        .count()
}

/// More values live at a barrier than regalloc2's 192 names: the spill slots go into the
/// registers left free (`alloc::promote`); each value is computed into its slot's register
/// (the store's move coalesced backwards, `alloc::forward`) and read there (the reload's move
/// forwarded), and no local memory is used. Moves stay only where reading the slot would
/// make an FFMA read two registers of one bank (its other sources, R7 and R68, take banks 3
/// and 0): about half the slots. Before coalescing: 127 moves; after: 75.
#[test]
fn spilled_values_are_computed_into_their_slot_registers() {
    let (regs, sass) = registers_and_sass("live_crowd.ptx");
    assert!(regs > 192, "{regs} registers: the crowd no longer spills");
    let moves = register_moves(&sass);
    assert!(
        moves <= 127 - 127 / 3,
        "{moves} register moves left:\n{sass}"
    );
    frame_ir::assert_eval_matches_sim("occupancy", "live_crowd.ptx");
}

#[test]
fn parameter_pairs_are_read_where_they_are_wanted() {
    let (regs, sass) = registers_and_sass("param_pairs.ptx");
    // `param_12` (at c[0x0][0x190]) starts a loop-carried value in the grid-stride loop:
    // it is read there, after the kernel's early exit, not once at its entry.
    let lines: Vec<&str> = sass.lines().collect();
    let exit = lines.iter().position(|l| l.contains("EXIT")).unwrap();
    let read = lines
        .iter()
        .position(|l| l.contains("c[0x0][0x190]"))
        .unwrap_or_else(|| panic!("param_12 never read:\n{sass}"));
    assert!(read > exit, "param_12 read at the entry:\n{sass}");
    // Seven pairs held from the entry made 39 (ptxas: 22).
    assert!(regs <= FULL_OCCUPANCY, "{regs} registers:\n{sass}");
    frame_ir::assert_eval_matches_sim("occupancy", "param_pairs.ptx");
}

/// The registers and spill bytes (stored and loaded) of kernel `name` of `file` (a corpus
/// file under `dir`), compiled alone.
fn kernel_registers(dir: &str, file: &str, name: &str) -> (u32, u32) {
    let k = kernel_report(dir, file, name);
    (k.registers, k.spill_store_bytes + k.spill_load_bytes)
}

/// The compile report of kernel `name` of `file` (a corpus file under `dir`), compiled alone.
fn kernel_report(dir: &str, file: &str, name: &str) -> leafold::driver::KernelReport {
    let ptx = frame_ir::read(dir, file);
    let opts = leafold::driver::Options {
        entries: vec![name.to_string()],
        ..frame_ir::options(file, Emit::Cubin)
    };
    let out =
        compile(&ptx, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    out.kernels.into_iter().find(|k| k.name == name).unwrap()
}

/// The full address folding shares one base chain (a register pair) among the accesses of
/// a block and of the blocks it dominates, and computes address-shaped sums as chains; in a
/// loop those pairs live across it. Where that costs a kernel warps, the driver compiles it
/// once more with one chain per access (`Fold::Lea`) and keeps that where it keeps more
/// warps resident without spilling and the code grows by at most an eighth. nvcc 11.8's
/// `bisectKernel` (eigenvalues): 43 registers (40 warps), ptxas 34 (48 warps); rodinia's
/// particlefilter `likelihood_kernel`: 48, ptxas 42. The retry first shares chains within
/// each block only (`Fold::Block`), which is enough for both: the six loads of
/// `likelihood_kernel`'s coefficient row keep one chain (2,022 instructions with one chain
/// per access, 1,944 so).
#[test]
fn shared_address_chains_give_way_to_the_warps() {
    for (file, kernel) in [
        (
            "cuda-samples__Samples_2_Concepts_and_Techniques_eigenvalues_bisect_small.ptx",
            "_Z12bisectKernelPfS_jS_S_PjS0_ffjjf",
        ),
        (
            "gpu-rodinia__cuda_particlefilter_ex_particle_CUDA_float_seq.ptx",
            "_Z17likelihood_kernelPdS_S_S_S_PiS0_S_PhS_S_iiiiiiS0_S_",
        ),
    ] {
        let (regs, spilled) = kernel_registers("corpus-nvcc/ptx", file, kernel);
        assert_eq!(spilled, 0, "{kernel} spills");
        // 33 to 40 registers: 48 warps per SM, ptxas's step for both.
        assert!(regs <= 40, "{kernel}: {regs} registers");
        let k = kernel_report("corpus-nvcc/ptx", file, kernel);
        assert!(k.fold.chains_shared > 0, "{kernel}: {:?}", k.fold);
    }
}
