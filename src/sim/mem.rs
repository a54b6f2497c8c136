//! Memory spaces of one launch: global regions, the running CTA's shared memory, its threads'
//! local memory and the constant banks. Every access is bounds- and alignment-checked here and
//! fails with a [`SimError`] naming the instruction address.

use super::trace::{Loc, WriteLog};
use super::{KernelInfo, SimError};
use crate::ir::eval::{
    GlobalRegion, Launch, CONST_WINDOW_BASE, LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE,
};

pub use crate::sm50::PARAM_BASE;
/// Size of bank 0 before the parameters.
pub const CONST_BANK0_SIZE: u32 = PARAM_BASE;

/// A state space an access goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Global,
    Shared,
    /// Local memory of the thread with this index in the CTA.
    Local(usize),
    Const(u8),
}

impl Space {
    fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local(_) => "local",
            Space::Const(_) => "constant",
        }
    }
}

pub(crate) struct Memory {
    pub global: Vec<GlobalRegion>,
    /// The running CTA's shared memory.
    pub shared: Vec<u8>,
    /// The running CTA's threads' local memory, by linear thread index.
    pub local: Vec<Vec<u8>>,
    /// Constant banks 0..31 (bank 0 is built from the launch).
    pub banks: Vec<Vec<u8>>,
    /// The launch's surfaces ([`crate::surface`]).
    pub surfaces: Vec<crate::surface::SurfaceDesc>,
    pub shared_size: usize,
    pub local_size: usize,
    /// Which instruction wrote each byte last (`sim::run_traced`); `None`: not recorded.
    pub log: Option<WriteLog>,
    /// CTAs started so far and threads in the CTAs before the running one (for [`Loc`]).
    pub ctas: usize,
    pub threads_before: usize,
}

fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

impl Memory {
    pub fn new(info: &KernelInfo, launch: &Launch) -> Result<Memory, SimError> {
        let bad = |m: String| Err(SimError::BadLaunch(m));
        let windows = SHARED_WINDOW_BASE..CONST_WINDOW_BASE + WINDOW_SIZE;
        if let Err(m) = launch.check_global_regions(windows, None) {
            return bad(m);
        }
        if (launch.params.len() as u64) < u64::from(info.param_size) {
            return bad(format!(
                "{} parameter bytes given, the kernel takes {}",
                launch.params.len(),
                info.param_size
            ));
        }
        if info.param_size > 0x1_0000 - PARAM_BASE {
            return bad(format!(
                "{} parameter bytes do not fit bank 0",
                info.param_size
            ));
        }
        let shared_size =
            u64::from(info.shared_size).next_multiple_of(16) + u64::from(launch.dynamic_shared);
        let local_size = u64::from(info.local_size) + u64::from(launch.local_size);
        if shared_size > WINDOW_SIZE || local_size > WINDOW_SIZE {
            return bad("a state space is larger than its 16 MB window".into());
        }
        let per_cta: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
        if per_cta.saturating_mul(local_size) + shared_size > 1 << 30 {
            return bad("a CTA needs more than 1 GB of memory".into());
        }

        // A `c[0x0][off]` operand reads a whole 32-bit word, and a bank is bound in whole
        // words, so the word holding the last parameter bytes reads whole even when the
        // parameters end inside it (an `.s8` last parameter: leafold MOVs its word and
        // extracts the byte); the bytes past the parameters read as zero.
        let mut b0 = vec![0u8; (PARAM_BASE + info.param_size).next_multiple_of(4) as usize];
        put32(&mut b0, 0x0, SHARED_WINDOW_BASE as u32);
        put32(&mut b0, 0x4, LOCAL_WINDOW_BASE as u32);
        for d in 0..3 {
            put32(&mut b0, 0x8 + 4 * d, launch.block[d]);
            put32(&mut b0, 0x14 + 4 * d, launch.grid[d]);
        }
        put32(&mut b0, 0x20, local_size as u32);
        b0[0x28..0x30].copy_from_slice(&launch.gridid.to_le_bytes());
        put32(&mut b0, 0xd0, CONST_WINDOW_BASE as u32);
        put32(&mut b0, 0xd4, (CONST_WINDOW_BASE >> 32) as u32);
        put32(&mut b0, 0xfc, launch.dynamic_shared);
        let p = info.param_size as usize;
        b0[PARAM_BASE as usize..PARAM_BASE as usize + p].copy_from_slice(&launch.params[..p]);

        // Each `.surfref` slot: the index of the launch's surface of that name (all ones,
        // which names no surface, when the launch binds none).
        for (off, name) in &info.surface_slots {
            let at = *off as usize;
            if at + 4 > 0x1_0000 {
                return bad(format!("surface slot {off:#x} outside bank 0"));
            }
            if b0.len() < at + 4 {
                b0.resize(at + 4, 0);
            }
            let index =
                crate::surface::index_of(&launch.surfaces, name).map_or(u32::MAX, |k| k as u32);
            put32(&mut b0, at, index);
        }
        let mut global = launch.global.clone();
        if info.texture_table {
            texture_table(info, launch, &mut b0, &mut global)?;
        }
        if info.surface_table {
            surface_table(launch, &mut b0, &mut global)?;
        }
        if info.sampler_table {
            sampler_table(info, &mut b0, &mut global)?;
        }
        let mut banks = vec![Vec::new(); 32];
        banks[0] = b0;
        for (bank, bytes) in &info.banks {
            if *bank == 0 || *bank >= 32 {
                return bad(format!("constant bank {bank} cannot be given"));
            }
            banks[*bank as usize] = bytes.clone();
        }
        Ok(Memory {
            surfaces: launch.surfaces.clone(),
            global,
            shared: Vec::new(),
            local: Vec::new(),
            banks,
            shared_size: shared_size as usize,
            local_size: local_size as usize,
            log: None,
            ctas: 0,
            threads_before: 0,
        })
    }

    /// Fresh shared and local memory for a CTA of `threads` threads.
    pub fn start_cta(&mut self, threads: usize) {
        // Every CTA of a launch has the same number of threads.
        self.threads_before = self.ctas * threads;
        self.ctas += 1;
        self.shared = vec![0; self.shared_size];
        self.local = vec![vec![0; self.local_size]; threads];
    }

    /// The bytes `[at, at + size)` of `space`, checked. `addr` is the instruction address.
    pub fn bytes(
        &mut self,
        addr: u64,
        space: Space,
        at: u64,
        size: u32,
    ) -> Result<&mut [u8], SimError> {
        if at % u64::from(size) != 0 {
            return Err(SimError::Misaligned {
                addr,
                space: space.name(),
                at,
                size,
            });
        }
        let oob = SimError::OutOfBounds {
            addr,
            space: space.name(),
            at,
            size,
        };
        let buf: &mut Vec<u8> = match space {
            Space::Global => {
                let end = at.checked_add(u64::from(size));
                let r = self.global.iter_mut().find(|r| {
                    r.base <= at && end.is_some_and(|e| e <= r.base + r.bytes.len() as u64)
                });
                let Some(r) = r else {
                    return Err(SimError::Unmapped { addr, at, size });
                };
                let off = (at - r.base) as usize;
                return Ok(&mut r.bytes[off..off + size as usize]);
            }
            Space::Shared => &mut self.shared,
            Space::Local(t) => match self.local.get_mut(t) {
                Some(l) => l,
                None => return Err(oob),
            },
            Space::Const(b) => match self.banks.get_mut(b as usize) {
                Some(c) => c,
                None => return Err(oob),
            },
        };
        match at.checked_add(u64::from(size)) {
            Some(end) if end <= buf.len() as u64 => Ok(&mut buf[at as usize..end as usize]),
            _ => Err(oob),
        }
    }

    /// Record that the instruction at `pc` wrote `size` bytes at `at` of `space` (when the
    /// write log is on).
    pub fn note_write(&mut self, pc: u64, space: Space, at: u64, size: u32) {
        let Some(log) = &mut self.log else { return };
        let first = match space {
            Space::Global => Loc::Global(at),
            Space::Shared => Loc::Shared {
                cta: self.ctas.saturating_sub(1),
                offset: at,
            },
            Space::Local(t) => Loc::Local {
                thread: self.threads_before + t,
                offset: at,
            },
            Space::Const(_) => return,
        };
        log.note(pc, first, size);
    }

    /// Read a 32-bit constant (ALU `c[bank][off]` operands).
    pub fn const32(&mut self, addr: u64, bank: u8, off: u64) -> Result<u32, SimError> {
        let b = self.bytes(addr, Space::Const(bank), off, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The driver's surface descriptor table ([`crate::tex_table::surf`]): a global region of
/// its own at its `TABLE_BASE`, its address in `c[0x0][0xc0]`; entry `i` is surface `i`
/// (the index the `.surfref` words and surface object handles hold).
fn surface_table(
    launch: &Launch,
    b0: &mut [u8],
    global: &mut Vec<GlobalRegion>,
) -> Result<(), SimError> {
    use crate::tex_table::surf as t;
    let bytes = t::table_bytes(&launch.surfaces);
    let table = (t::TABLE_BASE, t::TABLE_CBANK_OFFSET, "surface");
    place_table(table, bytes, b0, global)
}

/// Place a driver table (`base`, the bank-0 offset of its address, what it describes) as a
/// global region of its own after the launch's, and write its address into bank 0.
fn place_table(
    (base, cbank, what): (u64, u32, &str),
    bytes: Vec<u8>,
    b0: &mut [u8],
    global: &mut Vec<GlobalRegion>,
) -> Result<(), SimError> {
    let end = base + bytes.len() as u64;
    if global
        .iter()
        .any(|r| r.base < end && base < r.base + r.bytes.len() as u64)
    {
        return Err(SimError::BadLaunch(format!(
            "a global region overlaps the {what} descriptor table at {base:#x}"
        )));
    }
    global.push(GlobalRegion { base, bytes });
    let at = cbank as usize;
    b0[at..at + 8].copy_from_slice(&base.to_le_bytes());
    Ok(())
}

/// The driver's sampler descriptor table ([`crate::tex_table::samp`]): a global region of
/// its own at its `TABLE_BASE`, its address in `c[0x0][0xb8]`; entry `i` is the `i`-th of
/// [`KernelInfo::samplers`], whose slot word (a sampler's own, or a (texture, sampler)
/// pair's) holds `i << 20` above the texture's index.
fn sampler_table(
    info: &KernelInfo,
    b0: &mut Vec<u8>,
    global: &mut Vec<GlobalRegion>,
) -> Result<(), SimError> {
    use crate::tex_table::samp as t;
    let inits: Vec<_> = info.samplers.iter().map(|&(_, s)| s).collect();
    let table = (t::TABLE_BASE, t::TABLE_CBANK_OFFSET, "sampler");
    place_table(table, t::table_bytes(&inits), b0, global)?;
    for (i, &(off, _)) in info.samplers.iter().enumerate() {
        let at = off as usize;
        if at + 4 > 0x1_0000 {
            return Err(SimError::BadLaunch(format!(
                "sampler slot {off:#x} outside bank 0"
            )));
        }
        if b0.len() < at + 4 {
            b0.resize(at + 4, 0);
        }
        // A pair's word keeps the texture's index in its low 20 bits.
        let low =
            u32::from_le_bytes(b0[at..at + 4].try_into().unwrap()) & crate::tex_table::INDEX_MASK;
        put32(b0, at, low | (i as u32) << t::INDEX_SHIFT);
    }
    Ok(())
}

/// The driver's texture descriptor table ([`crate::tex_table`]): a global region of its own
/// at `TABLE_BASE` (after the launch's regions; the run's output leaves it out), its address
/// in `c[0x0][0xb0]`, and each bound `.texref`'s header index in its slot word.
fn texture_table(
    info: &KernelInfo,
    launch: &Launch,
    b0: &mut Vec<u8>,
    global: &mut Vec<GlobalRegion>,
) -> Result<(), SimError> {
    use crate::tex_table as t;
    let bytes = t::table_bytes(&launch.textures);
    let table = (t::TABLE_BASE, t::TABLE_CBANK_OFFSET, "texture");
    place_table(table, bytes, b0, global)?;
    for (off, name) in &info.textures {
        let at = *off as usize;
        if at + 4 > 0x1_0000 {
            return Err(SimError::BadLaunch(format!(
                "texture slot {off:#x} outside bank 0"
            )));
        }
        if b0.len() < at + 4 {
            b0.resize(at + 4, 0);
        }
        let index = t::named_index(&launch.textures, name).unwrap_or(t::INDEX_MASK);
        put32(b0, at, index);
    }
    Ok(())
}
