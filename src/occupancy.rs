//! Theoretical occupancy: how many warps of a kernel one Maxwell SM keeps resident.
//!
//! In: the target ([`Arch`]), a kernel's registers per thread, its static shared memory per
//! block, and the block size its directives fix (`.reqntid`, or the `.maxntid` bound), if any.
//! Out: an [`Occupancy`]: resident blocks and warps per SM, the block size they assume, and
//! which resource limits them. [`of_kernel`] reads the same inputs from a cubin's kernel, so
//! ptxas's cubins and ours are measured by one rule.
//!
//! The rules are those of compute capability 5.0, 5.2 and 5.3 (the CUDA C++ Programming
//! Guide's table of technical specifications, and the arithmetic of NVIDIA's occupancy
//! calculator, `cuda_occupancy.h`):
//!
//! * 64 warps and 32 blocks per SM; a block of `t` threads takes `ceil(t / 32)` warps.
//! * 65,536 registers per SM in 4 sub-partitions of 16,384, each holding whole warps; a warp
//!   takes `regs · 32` registers rounded up to the allocation unit of 256; at most 65,536
//!   registers per block (more: the block cannot launch, 0 warps).
//! * Shared memory per SM: 64 KiB (5.0, 5.3) or 96 KiB (5.2), at most 48 KiB per block,
//!   allocated in units of 256 bytes. Dynamic shared memory is a launch choice, not the
//!   kernel's: it is not counted.
//!
//! Without a block-size directive the block is the launch's choice; the figure is then the
//! best any block size (a multiple of 32 up to 1024) reaches, with the largest such block,
//! as `cudaOccupancyMaxPotentialBlockSize` picks it.

use crate::cubin::eiattr::{code, Attribute};
use crate::driver::Arch;

pub const WARPS_PER_SM: u32 = 64;
pub const BLOCKS_PER_SM: u32 = 32;
const REGS_PER_SM: u32 = 65_536;
const SUB_PARTITIONS: u32 = 4;
const REG_UNIT: u32 = 256;
const REGS_PER_BLOCK: u32 = 65_536;
const SMEM_UNIT: u64 = 256;
const SMEM_PER_BLOCK: u64 = 48 * 1024;
const MAX_BLOCK: u32 = 1024;

/// What stops more blocks from being resident.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limiter {
    /// 64 warps or 32 blocks per SM.
    Warps,
    Registers,
    SharedMemory,
}

impl Limiter {
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
        }
    }
}

/// Resident work per SM for one block size.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// Threads per block assumed.
    pub block: u32,
    /// Whether `block` comes from a directive (else it is the best block size).
    pub fixed_block: bool,
    pub blocks: u32,
    pub warps: u32,
    pub limiter: Limiter,
}

impl Occupancy {
    /// Resident warps as a fraction of the SM's 64.
    pub fn fraction(&self) -> f64 {
        f64::from(self.warps) / f64::from(WARPS_PER_SM)
    }
}

impl std::fmt::Display for Occupancy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if self.fixed_block { "" } else { "best at " };
        write!(
            f,
            "{} of {WARPS_PER_SM} warps per SM ({:.0}%), {how}{}-thread blocks, limited by {}",
            self.warps,
            100.0 * self.fraction(),
            self.block,
            self.limiter.name()
        )
    }
}

fn shared_per_sm(arch: Arch) -> u64 {
    match arch {
        Arch::Sm52 => 96 * 1024,
        Arch::Sm50 | Arch::Sm53 => 64 * 1024,
    }
}

/// Resident blocks and warps per SM for blocks of `block` threads (1..=1024).
fn for_block(arch: Arch, regs: u32, smem: u64, block: u32) -> (u32, Limiter) {
    let warps_per_block = block.div_ceil(32);
    let by_warps = (WARPS_PER_SM / warps_per_block).min(BLOCKS_PER_SM);

    let regs_per_warp = (regs * 32).div_ceil(REG_UNIT) * REG_UNIT;
    let by_regs = if regs_per_warp == 0 {
        u32::MAX
    } else if regs_per_warp * warps_per_block > REGS_PER_BLOCK {
        0
    } else {
        let warps_per_partition = (REGS_PER_SM / SUB_PARTITIONS) / regs_per_warp;
        warps_per_partition * SUB_PARTITIONS / warps_per_block
    };

    let by_smem = if smem == 0 {
        u32::MAX
    } else if smem > SMEM_PER_BLOCK {
        0
    } else {
        let per_block = smem.div_ceil(SMEM_UNIT) * SMEM_UNIT;
        u32::try_from(shared_per_sm(arch) / per_block).unwrap_or(u32::MAX)
    };

    // Ties name the hardware limit first: a kernel at 64 warps is not "limited by registers".
    let mut best = (by_warps, Limiter::Warps);
    for cand in [
        (by_regs, Limiter::Registers),
        (by_smem, Limiter::SharedMemory),
    ] {
        if cand.0 < best.0 {
            best = cand;
        }
    }
    best
}

/// The theoretical occupancy of a kernel using `regs` registers per thread and `smem` bytes of
/// static shared memory per block, with blocks of `block` threads if a directive fixes them.
pub fn theoretical(arch: Arch, regs: u32, smem: u64, block: Option<u32>) -> Occupancy {
    let one = |b: u32, fixed: bool| {
        let (blocks, limiter) = for_block(arch, regs, smem, b);
        Occupancy {
            block: b,
            fixed_block: fixed,
            blocks,
            warps: blocks * b.div_ceil(32),
            limiter,
        }
    };
    match block {
        Some(b) => one(b.clamp(1, MAX_BLOCK), true),
        None => (1..=MAX_BLOCK / 32)
            .map(|w| one(32 * w, false))
            .max_by_key(|o| (o.warps, o.block))
            .expect("at least one block size"),
    }
}

/// The block size a kernel's `.nv.info` fixes: `EIATTR_REQNTID` (`.reqntid`), else the
/// `EIATTR_MAX_THREADS` bound (`.maxntid`), as the product of its three sizes.
pub fn directive_block(info: &[Attribute]) -> Option<u32> {
    let dims = |want: u8| {
        info.iter().find_map(|a| match a {
            Attribute::Other { code, payload, .. } if *code == want && payload.len() == 12 => {
                let d =
                    |k: usize| u32::from_le_bytes(payload[4 * k..4 * k + 4].try_into().unwrap());
                Some(d(0).max(1) * d(1).max(1) * d(2).max(1))
            }
            _ => None,
        })
    };
    dims(code::REQNTID).or_else(|| dims(code::MAX_THREADS))
}

/// The theoretical occupancy of a kernel of a cubin, from what the cubin says of it.
pub fn of_kernel(arch: Arch, k: &crate::cubin::Kernel) -> Occupancy {
    let smem = k.shared.map_or(0, |(size, _)| size);
    theoretical(arch, k.regcount, smem, directive_block(&k.info))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures of NVIDIA's occupancy calculator for compute capability 5.x.
    #[test]
    fn matches_the_calculator() {
        // 32 registers, 256 threads: 8 blocks of 8 warps, every warp of the SM.
        let o = theoretical(Arch::Sm50, 32, 0, Some(256));
        assert_eq!((o.blocks, o.warps, o.limiter), (8, 64, Limiter::Warps));
        // 64 registers: a warp takes 2,048 registers, 8 per sub-partition, 32 per SM.
        let o = theoretical(Arch::Sm50, 64, 0, Some(256));
        assert_eq!((o.blocks, o.warps, o.limiter), (4, 32, Limiter::Registers));
        // 37 registers round up to 1,280 per warp: 12 warps per sub-partition, 48 per SM,
        // 6 blocks of 256 threads.
        let o = theoretical(Arch::Sm50, 37, 0, Some(256));
        assert_eq!((o.blocks, o.warps), (6, 48));
        // 255 registers: 8,192 per warp, 2 per sub-partition: 8 warps, one 256-thread block.
        let o = theoretical(Arch::Sm50, 255, 0, Some(256));
        assert_eq!((o.blocks, o.warps), (1, 8));
        // ... and a 512-thread block would need 131,072 registers: it cannot launch.
        assert_eq!(theoretical(Arch::Sm50, 255, 0, Some(512)).warps, 0);
    }

    #[test]
    fn shared_memory_per_arch() {
        // 20 KiB per block: 3 blocks on 64 KiB (sm_50, sm_53), 4 on 96 KiB (sm_52).
        let o = theoretical(Arch::Sm50, 16, 20 * 1024, Some(128));
        assert_eq!((o.blocks, o.limiter), (3, Limiter::SharedMemory));
        assert_eq!(theoretical(Arch::Sm52, 16, 20 * 1024, Some(128)).blocks, 4);
        assert_eq!(theoretical(Arch::Sm53, 16, 20 * 1024, Some(128)).blocks, 3);
        // Allocation in 256-byte units: 257 bytes take 512.
        assert_eq!(theoretical(Arch::Sm50, 16, 257, Some(32)).blocks, 32);
        assert_eq!(
            for_block(Arch::Sm50, 16, 257, 32),
            (32, Limiter::Warps),
            "128 blocks fit by shared memory, 32 by the block limit"
        );
        // Over 48 KiB per block: no block.
        assert_eq!(theoretical(Arch::Sm52, 16, 49 * 1024, Some(32)).warps, 0);
    }

    #[test]
    fn small_blocks_hit_the_block_limit() {
        // 32-thread blocks: 32 blocks of one warp, half the SM.
        let o = theoretical(Arch::Sm50, 8, 0, Some(32));
        assert_eq!((o.blocks, o.warps, o.limiter), (32, 32, Limiter::Warps));
        // 96 threads is 3 warps: 21 blocks, 63 warps.
        assert_eq!(theoretical(Arch::Sm50, 8, 0, Some(96)).warps, 63);
    }

    #[test]
    fn without_a_directive_the_best_block_is_taken() {
        let o = theoretical(Arch::Sm50, 64, 0, None);
        assert_eq!(o.warps, 32);
        assert!(!o.fixed_block);
        // The largest block that reaches it.
        assert_eq!(o.block, 1024);
        let o = theoretical(Arch::Sm50, 255, 0, None);
        assert_eq!((o.warps, o.block), (8, 256));
    }

    #[test]
    fn directive_block_reads_reqntid_before_maxntid() {
        let rec = |code: u8, d: [u32; 3]| Attribute::Other {
            format: crate::cubin::eiattr::Format::Sval,
            code,
            payload: d.iter().flat_map(|x| x.to_le_bytes()).collect(),
        };
        assert_eq!(directive_block(&[]), None);
        assert_eq!(
            directive_block(&[rec(code::MAX_THREADS, [128, 2, 1])]),
            Some(256)
        );
        assert_eq!(
            directive_block(&[
                rec(code::MAX_THREADS, [128, 2, 1]),
                rec(code::REQNTID, [96, 1, 1])
            ]),
            Some(96)
        );
    }
}
