//! Memory of the reference interpreter: the windows of each state space, resolving a generic
//! address, bounds checks and the per-thread view ([`ThreadMem`]) that reads, writes and
//! reports each access to the race shadows.
//!
//! In: a space, an address and a size. Out: bytes read or written, or an [`EvalError`] for an
//! access outside every region.

use super::*;

/// The address an access names: zero-extended address plus signed offset, truncated to 32
/// bits in the spaces whose addresses are 32-bit.
pub(super) fn effective_address(space: Space, addr: u64, offset: i32) -> u64 {
    let ea = addr.wrapping_add(i64::from(offset) as u64);
    match space {
        Space::Global | Space::Generic => ea,
        _ => ea & 0xffff_ffff,
    }
}

/// Map a generic address into its space; other spaces map to themselves. Checks alignment.
pub(super) fn resolve(
    inst: Inst,
    space: Space,
    ea: u64,
    size: u32,
) -> Result<(Space, u64), EvalError> {
    let (sp, addr) = if space == Space::Generic {
        let window = |base: u64| (base..base + WINDOW_SIZE).contains(&ea);
        if window(SHARED_WINDOW_BASE) {
            (Space::Shared, ea - SHARED_WINDOW_BASE)
        } else if window(LOCAL_WINDOW_BASE) {
            (Space::Local, ea - LOCAL_WINDOW_BASE)
        } else if window(LOCAL_WINDOW_BASE + (1 << 32) - WINDOW_SIZE) {
            // The dynamic stack's (negative) offsets, as `cvta.local` of a 64-bit one makes.
            (Space::Local, ea - LOCAL_WINDOW_BASE)
        } else if window(CONST_WINDOW_BASE) {
            (Space::Const, ea - CONST_WINDOW_BASE)
        } else {
            (Space::Global, ea)
        }
    } else {
        (space, ea)
    };
    if ea % u64::from(size.max(1)) != 0 {
        return Err(EvalError::Misaligned {
            inst,
            space: sp,
            addr: ea,
            size,
        });
    }
    Ok((sp, addr))
}

/// Read `size` (≤ 8) little-endian bytes of `bytes` at `addr`.
pub(super) fn read(
    inst: Inst,
    space: Space,
    bytes: &[u8],
    addr: u64,
    size: u32,
) -> Result<u64, EvalError> {
    let range = range_in(inst, space, bytes.len(), addr, size)?;
    Ok(bytes[range]
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

/// A shared access past the kernel's `len` bytes of shared memory (but inside the window)
/// is an array overrun: undefined, like an access between the kernel's variables (see the
/// essay), not a fault.
pub(super) fn within_shared(inst: Inst, addr: u64, size: u32, len: usize) -> Result<(), EvalError> {
    if addr.saturating_add(u64::from(size)) > len as u64 && addr < WINDOW_SIZE {
        return Err(EvalError::Undefined {
            inst,
            why: format!(
                "{size}-byte shared access at 0x{addr:x} lies outside every .shared variable \
                 the kernel uses (past its {len} bytes of shared memory)"
            ),
        });
    }
    Ok(())
}

pub(super) fn range_in(
    inst: Inst,
    space: Space,
    len: usize,
    addr: u64,
    size: u32,
) -> Result<std::ops::Range<usize>, EvalError> {
    let end = addr.checked_add(u64::from(size));
    match end {
        Some(end) if end <= len as u64 => Ok(addr as usize..end as usize),
        _ => Err(EvalError::OutOfBounds {
            inst,
            space,
            addr,
            size,
        }),
    }
}

impl ThreadMem<'_> {
    /// The `.local` offset a `.local` address value names (values are absolute: see the
    /// `ir::eval` essay); other spaces' addresses as they are.
    fn local_offset(&self, space: Space, addr: u64) -> u64 {
        if space == Space::Local {
            self.stack.offset(addr)
        } else {
            addr
        }
    }

    /// The bytes of `space` holding `[addr, addr + size)` and the range inside them.
    pub(super) fn locate(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
    ) -> Result<(&mut [u8], std::ops::Range<usize>), EvalError> {
        let bytes: &mut [u8] = match space {
            Space::Shared => {
                within_shared(inst, addr, size, self.shared.len())?;
                self.shared
            }
            Space::Local => {
                if let Some(r) = self.stack.range(inst, addr, size)? {
                    return Ok((&mut self.stack.bytes, r));
                }
                self.local
            }
            Space::Const => &mut self.mem.constant,
            // Param bytes are only read through `read` below; stores to param are rejected by
            // the verifier, so reaching here means a generic address, which never maps param.
            Space::Param => {
                return Err(EvalError::OutOfBounds {
                    inst,
                    space,
                    addr,
                    size,
                })
            }
            Space::Global | Space::Generic => {
                let Some((k, r)) = self.mem.global_at(addr, size) else {
                    return Err(EvalError::Unmapped { inst, addr, size });
                };
                let bytes = match self.mem.global.get_mut(k) {
                    Some(region) => &mut region.bytes,
                    None => &mut self.mem.module_global,
                };
                return Ok((bytes, r));
            }
        };
        let r = range_in(inst, space, bytes.len(), addr, size)?;
        Ok((bytes, r))
    }

    pub(super) fn read(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
    ) -> Result<u64, EvalError> {
        if space == Space::Param {
            return read(inst, space, self.params, addr, size);
        }
        let addr = self.local_offset(space, addr);
        let (bytes, r) = self.locate(inst, space, addr, size)?;
        let r2 = r.clone();
        let value = bytes[r]
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let in_stack = space == Space::Local && self.stack.range(inst, addr, size)?.is_some();
        let def: &[bool] = match space {
            Space::Local if in_stack => &self.stack.def,
            Space::Shared => self.shared_def,
            Space::Local => self.local_def,
            _ => return Ok(value),
        };
        if !def.is_empty() && def[r2].iter().any(|d| !d) {
            return Err(EvalError::Undefined {
                inst,
                why: format!("reads {space} memory that nothing wrote (its value is undefined)"),
            });
        }
        Ok(value)
    }

    /// Record an access for race detection (shared and global memory; see the module
    /// essay). `thread` is the thread's linear index in its CTA.
    pub(super) fn note(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
        thread: u32,
        kind: Access,
    ) -> Result<(), EvalError> {
        match space {
            Space::Shared => {
                let len = self.shared.len();
                within_shared(inst, addr, size, len)?;
                let r = range_in(inst, space, len, addr, size)?;
                self.races.note(inst, len, r, thread, kind)
            }
            Space::Global | Space::Generic => {
                let Some((k, r)) = self.mem.global_at(addr, size) else {
                    return Err(EvalError::Unmapped { inst, addr, size });
                };
                if !self.mem.global_races.on {
                    return Ok(());
                }
                let len = match self.mem.global.get(k) {
                    Some(region) => region.bytes.len(),
                    None => self.mem.module_global.len(),
                };
                let who = self.first_thread + thread;
                self.mem.global_races.note(inst, k, len, r, addr, who, kind)
            }
            _ => Ok(()),
        }
    }

    pub(super) fn check(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
    ) -> Result<(), EvalError> {
        let addr = self.local_offset(space, addr);
        self.locate(inst, space, addr, size).map(|_| ())
    }

    pub(super) fn write(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
        x: u64,
    ) -> Result<(), EvalError> {
        let addr = self.local_offset(space, addr);
        let (bytes, r) = self.locate(inst, space, addr, size)?;
        for (i, b) in bytes[r.clone()].iter_mut().enumerate() {
            *b = (x >> (8 * i)) as u8;
        }
        let in_stack = space == Space::Local && self.stack.range(inst, addr, size)?.is_some();
        let def = match space {
            Space::Local if in_stack => &mut self.stack.def,
            Space::Shared => &mut self.shared_def,
            Space::Local => &mut self.local_def,
            _ => return Ok(()),
        };
        if !def.is_empty() {
            def[r].fill(true);
        }
        Ok(())
    }
}
