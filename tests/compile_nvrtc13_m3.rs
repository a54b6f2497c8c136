//! `tests/data/nvrtc13/ptx/m3_*.ptx`: the tensor-core stretch of issue 26, CUDA C++ written
//! for these tests (`src/m3_*.cu`) compiled to PTX 9.x by NVRTC 13 (`gen.py`):
//! `m3_mma.cu` (inline PTX `ldmatrix` `.x4` and `.x2.trans` feeding an f16 `mma.sync`
//! m16n8k16 with f32 accumulators; `.s8` m16n8k32 and `.u8 × .s8` m8n8k16 on fragments
//! loaded into registers) and `m3_wmma.cu` (a 16×16×16 `nvcuda::wmma` tile, f16 in, f32
//! accumulator). leafold emulates them on sm_5x (`src/ir/build/mma.rs`).
//!
//! Each file must compile for sm_50 and for sm_53, be hazard-free, be listed by cuobjdump
//! exactly as we print it (with the oracle), and every kernel must verify: `ir::eval` and
//! the simulator running our SASS agree on every byte of seeded random launches.

mod common;

use common::ptx_files::{self, Case};
use leafold::driver::Arch;
use leafold::verify::Outcome;

fn cases() -> Vec<Case> {
    let files = ptx_files::read_dir("tests/data/nvrtc13/ptx", "", |n| n.starts_with("m3_"));
    ptx_files::for_archs(&files, &[Arch::Sm50, Arch::Sm53])
}

#[test]
fn every_file_compiles_hazard_free_and_as_cuobjdump_lists_it() {
    let cases = cases();
    assert_eq!(
        cases.len(),
        2 * 2,
        "m3_mma and m3_wmma, for sm_50 and sm_53"
    );
    ptx_files::compile_all("compile_nvrtc13_m3", &cases, |_| None, |_, _| {});
}

#[test]
fn every_kernel_verifies_on_sm50_and_sm53() {
    let kernels = ptx_files::verify_all(&cases(), 2, |_, o| matches!(o, Outcome::Match { .. }));
    assert_eq!(
        kernels,
        2 * 3,
        "mma_f16, mma_s8 and wmma_tile on two architectures"
    );
}
