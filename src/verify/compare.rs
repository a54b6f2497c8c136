//! Comparing the two sides of a run: the first byte where the reference's memory and the
//! simulator's differ (global buffers, and the `.local` variables kept on both sides), and the
//! SASS instruction that last wrote it.
//!
//! In: the memories after both runs. Out: the first [`Difference`], or none.

use super::*;

/// A differing byte.
pub(super) struct Difference {
    pub(super) loc: Loc,
    pub(super) expected: u8,
    pub(super) got: u8,
}

/// Where the `.local` variables leafold's code keeps lie: `(offset in the reference's local
/// memory, offset in ours, size)` for each, or `None` when the layouts are the same.
/// `ir::sroa` promotes some variables to registers (`driver::prepare_kernel_ir`), so their
/// bytes stay only in the reference's memory and the others may move down; the final bytes
/// of a thread's local memory are not an output, so only the kept variables are compared.
pub(super) type LocalMap = Vec<(usize, usize, usize)>;

/// Which local bytes [`first_difference`] compares: none (ptxas's code, whose layout is its
/// own), all of them in the reference's layout (`Some(None)`), or the kept variables.
pub(super) type LocalCompare<'a> = Option<Option<&'a [(usize, usize, usize)]>>;

/// The [`LocalMap`] of `f` as the driver compiles it, with `ir::unindex` on or (its
/// fallback, [`VerifyOptions::indexed_locals_in_memory`]) off, and runtime-trip loops
/// unrolled as the compile had them (`runtime_unroll`; the driver's rolled fallback keeps
/// the same layout).
pub(super) fn kept_locals(
    module: &ir::Module,
    f: &Function,
    runtime_unroll: bool,
    unindex: bool,
) -> Option<LocalMap> {
    let mut compiled = f.clone();
    crate::driver::prepare_kernel_ir_with(module, &mut compiled, runtime_unroll, unindex);
    let (ours, our_end) = module.local_layout(&compiled);
    let (theirs, their_end) = module.local_layout(f);
    // The outgoing stack-argument area (`ir::outgoing_args_size`) is no variable: our code
    // writes the arguments there, the reference passes them by value.
    if ours == theirs && our_end == their_end && ir::outgoing_args_size(&compiled) == 0 {
        return None;
    }
    let mut map: LocalMap = ours
        .iter()
        .filter_map(|(gv, &o)| {
            let r = *theirs.get(gv)?;
            Some((r as usize, o as usize, module.vars[*gv].size as usize))
        })
        .collect();
    map.sort_unstable();
    Some(map)
}

/// The first byte where `got` differs from `reference`: global regions, then shared memory,
/// then (with `local`, for leafold's code) the declared part of each thread's local memory:
/// all of it (`Some(None)`: the reference's layout) or the variables a [`LocalMap`] names.
pub(super) fn first_difference(
    reference: &RunOutput,
    got: &RunOutput,
    local: LocalCompare,
    shared: bool,
) -> Option<Difference> {
    for r in &reference.global {
        let Some(g) = got.region(r.base) else {
            return Some(Difference {
                loc: Loc::Global(r.base),
                expected: r.bytes.first().copied().unwrap_or(0),
                got: 0,
            });
        };
        if let Some(i) = (0..r.bytes.len()).find(|&i| g.get(i) != Some(&r.bytes[i])) {
            return Some(Difference {
                loc: Loc::Global(r.base + i as u64),
                expected: r.bytes[i],
                got: g.get(i).copied().unwrap_or(0),
            });
        }
    }
    for (cta, (e, g)) in reference.shared.iter().zip(&got.shared).enumerate() {
        // ptxas allocates only the `.shared` variables a kernel uses (the reference, every
        // variable of the module) and orders them its own way, without symbols, so its shared
        // memory is compared only when the caller knows the layouts agree (`shared`) and the
        // sizes do. leafold's layout is the reference's (`local` is `Some`).
        if !shared || (local.is_none() && e.len() != g.len()) {
            continue;
        }
        let undefined = reference.shared_undefined.get(cta);
        let compared = |i: usize| !undefined.is_some_and(|u| u.get(i) == Some(&true));
        if let Some(i) = (0..e.len()).find(|&i| compared(i) && g.get(i) != Some(&e[i])) {
            return Some(Difference {
                loc: Loc::Shared {
                    cta,
                    offset: i as u64,
                },
                expected: e[i],
                got: g.get(i).copied().unwrap_or(0),
            });
        }
    }
    if let Some(map) = local {
        for (thread, (e, g)) in reference.local.iter().zip(&got.local).enumerate() {
            // (offset in the reference, offset in ours) of the first differing byte.
            let first = match map {
                None => (0..e.len())
                    .find(|&i| g.get(i) != Some(&e[i]))
                    .map(|i| (i, i)),
                Some(map) => map.iter().find_map(|&(r, o, n)| {
                    (0..n)
                        .find(|&i| g.get(o + i) != e.get(r + i))
                        .map(|i| (r + i, o + i))
                }),
            };
            if let Some((i, j)) = first {
                return Some(Difference {
                    loc: Loc::Local {
                        thread,
                        offset: j as u64,
                    },
                    expected: e.get(i).copied().unwrap_or(0),
                    got: g.get(j).copied().unwrap_or(0),
                });
            }
        }
    }
    None
}

impl Difference {
    pub(super) fn describe(&self) -> String {
        match self.loc {
            Loc::Global(a) => format!("global 0x{a:x}"),
            Loc::Shared { cta, offset } => format!("shared 0x{offset:x} of CTA {cta}"),
            Loc::Local { thread, offset } => {
                format!("local 0x{offset:x} of thread {thread} (launch-wide index)")
            }
        }
    }
}
