//! The launch of one verification run: the grid and block shape a kernel's special registers
//! ask for, the buffers and parameters of run `seed` shaped by what [`inputs`] found (pointers,
//! sizes, indices), dynamic shared memory and stack, and the textures the kernel reads, bound
//! alike for the reference and the simulator.
//!
//! In: an IR function, its [`inputs::Plan`] and the [`VerifyOptions`]. Out: an
//! [`eval::Launch`] both sides run on. Invariant: every pointer points into its own buffer with
//! a margin before it ([`buffer_margin`]).

use super::*;

/// Where buffer number `k` (object `k` of the input plan) goes.
pub(super) fn buffer_base(k: usize, size: u64, addr32: bool) -> Option<u64> {
    if addr32 {
        let base = 0x1000_0000u64 * (k as u64 + 1);
        (base + size <= 1 << 32).then_some(base)
    } else {
        // Straddle the 4 GB line n << 32: carries into the high word get exercised. The
        // line of the module's `.global` variables (`eval::MODULE_GLOBAL_BASE`) is skipped:
        // a buffer there would overlap them.
        let module_line = eval::MODULE_GLOBAL_BASE >> 32;
        let mut line = k as u64 + 1;
        if line >= module_line {
            line += 1;
        }
        Some((line << 32) - (size / 2) / 256 * 256)
    }
}

/// The grid shape of a launch. A kernel that reads `%ctaid.y` (or `.z`) but not `%ctaid.x`
/// was written for a grid along that dimension (its CTAs along x would all do the same
/// work, racing on the same output), so, with `shape_block`, a grid of `n × 1 × 1` CTAs is
/// arranged along the first dimension the kernel reads.
pub fn launch_grid(f: &Function, opts: &VerifyOptions) -> [u32; 3] {
    let [x, y, z] = opts.grid;
    if !opts.shape_block || y != 1 || z != 1 || x == 1 {
        return opts.grid;
    }
    let reads = |d: ir::Dim| {
        f.insts.values().any(|n| {
            matches!(
                n.data,
                InstData::SpecialReg {
                    reg: ir::SpecialReg::Ctaid(e) | ir::SpecialReg::Nctaid(e)
                } if e == d
            )
        })
    };
    if reads(ir::Dim::X) {
        opts.grid
    } else if reads(ir::Dim::Y) {
        [1, x, 1]
    } else if reads(ir::Dim::Z) {
        [1, 1, x]
    } else {
        opts.grid
    }
}

/// The block shape of a launch. A kernel that reads `%tid.y` or `%ntid.y` was written for
/// two-dimensional blocks (a 16×16 tile, say), and a 64×1 block would make it index its
/// shared tiles out of bounds, where the fault depends on how the compiler laid the tiles
/// out; so, with `shape_block`, the same thread count is arranged as 16 × n (and as 4 × 4 × n
/// for kernels that read the z dimension).
pub fn launch_block(f: &Function, opts: &VerifyOptions) -> [u32; 3] {
    let [x, y, z] = opts.block;
    let threads = x * y * z;
    if !opts.shape_block || y != 1 || z != 1 {
        return opts.block;
    }
    let reads = |d: ir::Dim| {
        f.insts.values().any(|n| {
            matches!(
                n.data,
                InstData::SpecialReg {
                    reg: ir::SpecialReg::Tid(e) | ir::SpecialReg::Ntid(e)
                } if e == d
            )
        })
    };
    if reads(ir::Dim::Z) && threads % 16 == 0 {
        [4, 4, threads / 16]
    } else if reads(ir::Dim::Y) && threads % 16 == 0 {
        [16, threads / 16, 1]
    } else {
        opts.block
    }
}

/// Per-thread bytes of stack below the frame for kernels with `alloca` (16 KB; CUDA's
/// default `cudaLimitStackSize` is 1 KB, but random sizes and loops want more).
pub const DYNAMIC_STACK_BYTES: u32 = 16 << 10;

/// How the parameters [`inputs`] found to be sizes, indices or bounds are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sizes {
    /// Small: in `1..inputs::SMALL`.
    #[default]
    Small,
    /// At least the launch's thread count (below twice it), for kernels written for sizes
    /// no smaller than the launch (each thread its own element of an array of that size):
    /// tried on the full launch when it is undefined with small sizes.
    Launch,
}

/// The launch of run `seed`: parameters and buffers as the module essay says, shaped by
/// `plan` ([`inputs`]). Each buffer has `buffer` bytes from where its pointers point, and
/// a margin before ([`buffer_margin`]).
/// Public for `examples/hwcheck_export.rs`, which replays the same launches on a GPU.
pub fn make_launch(
    f: &Function,
    plan: &inputs::Plan,
    buffer: u64,
    seed: u64,
    opts: &VerifyOptions,
) -> Result<Launch, String> {
    let mut rng = Rng::new(seed);
    let mut launch = Launch::new(launch_grid(f, opts), launch_block(f, opts));
    launch.global_races = true;
    // Bytes stored from undefined registers are whatever the register held: not compared.
    launch.undefined_registers = true;
    if f.insts
        .values()
        .any(|i| matches!(i.data, ir::InstData::Stack { .. }))
    {
        // Room for `alloca` below the frame, in `ir::eval` and in the simulator alike; a
        // multiple of every alignment up to 16 KB, so both align the same addresses. (A
        // subroutine's frames go there too: `verify_launch` gives such kernels the room.)
        launch.local_size = DYNAMIC_STACK_BYTES;
    }
    launch.step_limit = step_limit(launch.grid, launch.block);
    let threads: u64 = launch
        .grid
        .iter()
        .chain(&launch.block)
        .map(|&d| u64::from(d))
        .product();
    let n = plan.objects.len();
    let margin = buffer_margin(buffer);
    let total = buffer + margin;
    let mut bases = Vec::with_capacity(n);
    for k in 0..n {
        bases.push(buffer_base(k, total, plan.addr32).ok_or_else(|| {
            format!("{n} buffers of {total} bytes do not fit a 32-bit address space")
        })?);
    }
    let mut bufs: Vec<Vec<u8>> = (0..n)
        .map(|_| {
            let mut bytes = vec![0u8; total as usize];
            rng.fill(&mut bytes);
            bytes
        })
        .collect();
    let mut params = vec![0u8; f.param_size() as usize];
    for p in &f.params {
        let at = p.offset as usize;
        let dst = &mut params[at..at + p.size as usize];
        if p.size <= 8 {
            let v = rng.below(inputs::SMALL).to_le_bytes();
            let n = dst.len();
            dst.copy_from_slice(&v[..n]);
        } else {
            rng.fill(dst);
        }
    }
    // Where each object's pointers point from (its record 0), and its record size.
    let records: Vec<u64> = (0..n).map(|k| plan.record(k, buffer)).collect();
    let origins: Vec<u64> = records
        .iter()
        .map(|&rec| match margin.next_multiple_of(rec) {
            m if m + rec <= total => m,
            _ => margin,
        })
        .collect();
    let targets = Targets {
        bases: &bases,
        records: &records,
        origins: &origins,
        total,
    };
    // Small values first, pointers last (a pointer wins where both were inferred).
    for pointers in [false, true] {
        for field in &plan.params {
            let is_ptr = matches!(field.kind, inputs::Kind::Pointer { .. });
            if is_ptr != pointers {
                continue;
            }
            let v = match (field.kind, opts.sizes) {
                (inputs::Kind::Small, Sizes::Launch) => threads + rng.below(threads),
                (kind, _) => targets.value(kind, 0, &mut rng, None),
            };
            write_le(&mut params, field.offset as usize, field.bytes, v);
        }
        for (k, o) in plan.objects.iter().enumerate() {
            for field in &o.fields {
                let is_ptr = matches!(field.kind, inputs::Kind::Pointer { .. });
                if is_ptr != pointers {
                    continue;
                }
                let bytes = u64::from(field.bytes);
                // Positions relative to the object's origin, before it as well as after.
                let step = if field.stride > 0 {
                    field.stride * bytes.div_ceil(field.stride)
                } else if o.loaded {
                    records[k]
                } else {
                    total
                };
                let mut pos = (origins[k] + field.offset) % step;
                if field.stride == 0 && !o.loaded {
                    pos = origins[k] + field.offset;
                }
                // Record numbers of pointers: an odd multiplier spreads neighbours apart.
                let spread = (rng.next_u64() | 1, rng.next_u64());
                let mut i = 0u64;
                while pos + bytes <= total {
                    let v = targets.value(field.kind, i, &mut rng, Some(spread));
                    write_le(&mut bufs[k], pos as usize, field.bytes, v);
                    pos += step;
                    i += 1;
                }
            }
        }
    }
    for (base, bytes) in bases.into_iter().zip(bufs) {
        launch.global.push(GlobalRegion { base, bytes });
    }
    launch.params = params;
    Ok(launch)
}

/// Bind the textures kernel `f` reads ([`ir::tex::texture_needs`]) into `launch`, for the
/// reference and the simulator alike: the user's descriptions (`opts.textures`) or the
/// defaults, random texels from `seed` ([`crate::texture::launch::bind_for_launch`]), and
/// each texture object's handle in its `.u64` parameter.
pub(super) fn bind_textures(
    module: &ir::Module,
    f: &Function,
    mut launch: Launch,
    seed: u64,
    opts: &VerifyOptions,
) -> Result<Launch, String> {
    let needs = ir::tex::texture_needs(module, f);
    if needs.is_empty() {
        return Ok(launch);
    }
    let bound = crate::texture::launch::bind_for_launch(&needs, &opts.textures, seed)?;
    for (name, handle) in &bound.handles {
        if let Some(p) = f.params.iter().find(|p| p.name == *name && p.size == 8) {
            write_le(&mut launch.params, p.offset as usize, 8, *handle);
        } else {
            write_handle_in_buffer(f, &mut launch, name, *handle)?;
        }
    }
    launch.textures = bound.bindings;
    Ok(launch)
}

/// Store texture object `handle` where the kernel loads it from: `name` is `p+OFF`
/// ([`ir::tex::handle_source`]), the word `OFF` bytes past where pointer parameter `p`
/// points, in whichever buffer of the launch holds it (both sides read the same launch).
pub(super) fn write_handle_in_buffer(
    f: &Function,
    launch: &mut Launch,
    name: &str,
    handle: u64,
) -> Result<(), String> {
    let (param, off) = name
        .rsplit_once('+')
        .and_then(|(p, o)| Some((p, o.parse::<u64>().ok()?)))
        .ok_or_else(|| format!("texture object `{name}`: no parameter holds it"))?;
    let p = f
        .params
        .iter()
        .find(|p| p.name == param && p.size == 8)
        .ok_or_else(|| format!("texture object `{name}`: no pointer parameter `{param}`"))?;
    let at = p.offset as usize;
    let ptr = launch
        .params
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .ok_or_else(|| format!("texture object `{name}`: parameter `{param}` has no value"))?;
    let addr = ptr.wrapping_add(off);
    let region = launch
        .global
        .iter_mut()
        .find(|r| addr >= r.base && addr + 8 <= r.base + r.bytes.len() as u64)
        .ok_or_else(|| {
            format!("texture object `{name}`: {addr:#x} is in no buffer of the launch")
        })?;
    write_le(&mut region.bytes, (addr - region.base) as usize, 8, handle);
    Ok(())
}

/// Where the objects of a launch are, for the values of pointer fields.
pub(super) struct Targets<'a> {
    pub(super) bases: &'a [u64],
    pub(super) records: &'a [u64],
    pub(super) origins: &'a [u64],
    pub(super) total: u64,
}

/// Bytes of a buffer before where its pointers point: 1/16 of it, 256-aligned (0 for
/// buffers under 4 KiB).
pub fn buffer_margin(buffer: u64) -> u64 {
    (buffer / 16) / 256 * 256
}

/// Write the low `bytes` bytes of `v` at `at` (little-endian), when they fit.
pub(super) fn write_le(dst: &mut [u8], at: usize, bytes: u32, v: u64) {
    let n = (bytes as usize).min(8);
    if let Some(d) = dst.get_mut(at..at + n) {
        d.copy_from_slice(&v.to_le_bytes()[..n]);
    }
}

impl Targets<'_> {
    /// The value of instance `i` of a field of `kind`: a small number, or a pointer to a
    /// record of its target (record 0 for a parameter, `spread` picks the record otherwise;
    /// an end pointer a few records in).
    pub(super) fn value(
        &self,
        kind: inputs::Kind,
        i: u64,
        rng: &mut Rng,
        spread: Option<(u64, u64)>,
    ) -> u64 {
        match kind {
            inputs::Kind::Small => 1 + rng.below(inputs::SMALL - 1),
            inputs::Kind::Scaled { scale } => {
                1 + rng.below(inputs::Kind::index_bound(scale, self.total))
            }
            inputs::Kind::Pointer { target, end } => {
                let (rec, origin) = (self.records[target], self.origins[target]);
                let half = ((self.total - origin) / rec / 2).max(1);
                let r = if end {
                    1 + rng.below(half.min(8))
                } else {
                    match spread {
                        Some((mul, start)) => start.wrapping_add(i.wrapping_mul(mul)) % half,
                        None => 0,
                    }
                };
                self.bases[target] + origin + r * rec
            }
        }
    }
}
