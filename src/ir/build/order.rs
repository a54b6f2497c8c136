//! Memory-ordering qualifiers of sm_70+ PTX (`.relaxed/.acquire/.release/.acq_rel/.sc` with a
//! scope `.cta/.cluster/.gpu/.sys`) on `ld`, `st`, `atom`, `red` and `fence`, mapped onto
//! Maxwell's one ordering instruction, `MEMBAR` (an IR `MemBar`), as strong as they require.
//!
//! In: an instruction's modifier words. Out: the [`MemScope`] of its fence and where the fence
//! goes. sm_5x has no acquire or release accesses, so each becomes an ordinary (strong:
//! `.volatile`-like for `ld`/`st`, see `cache_op`) access plus a full fence of the scope:
//!
//! ```text
//! ld.acquire.S          access, then MEMBAR.S   (later accesses cannot move above it)
//! st.release.S          MEMBAR.S, then access   (earlier accesses cannot move below it)
//! atom.acq_rel.S        MEMBAR.S, atom, MEMBAR.S
//! *.relaxed.S           the access alone (sm_5x atomics and volatile accesses are relaxed)
//! fence{.sc,.acq_rel}.S MEMBAR.S
//! fence.proxy.*         MEMBAR.GL   (ptxas 11.8 writes MEMBAR.SC.GPU for sm_70)
//! membar.proxy.*        MEMBAR.GL
//!
//! scope: .cta -> MEMBAR.CTA; .gpu, .cluster, none -> MEMBAR.GL; .sys -> MEMBAR.SYS
//! ```
//!
//! `MEMBAR` is a full (sequentially consistent) fence, so `.sc` needs nothing more. A cluster
//! on Maxwell is at most one CTA, but its memory is the device's: `.cluster` takes the GPU
//! fence, which is never weaker. For comparison, ptxas 11.8 compiling the same forms for
//! sm_70 writes `LDG.E.STRONG.GPU` + `CCTL.IVALL` for `ld.acquire.gpu`, `MEMBAR.ALL.GPU` +
//! `STG.E.STRONG.GPU` for `st.release.gpu`, `MEMBAR.SC.CTA` for `fence.sc.cta`,
//! `MEMBAR.ALL.GPU` for `fence.acq_rel.gpu`: the same placement, with sm_70's cheaper
//! half-fences where leafold has only `MEMBAR` (on sm_5x `MEMBAR.GL`/`.SYS` also invalidate
//! the L1, `.IVALLD`, which is what an acquire needs of a cached load).

use super::FnBuilder;
use crate::ir::MemScope;
use crate::ptx::ast::Instruction;

/// Where an access's fences go.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Order {
    /// A fence before the access (release semantics).
    pub before: Option<MemScope>,
    /// A fence after the access (acquire semantics).
    pub after: Option<MemScope>,
}

/// Whether `ins` has the modifier word `w`, as a table flag or as a word of an open-ended
/// opcode (`fence` keeps its words as written).
pub(super) fn has_word(ins: &Instruction, w: &str) -> bool {
    ins.mods.iter().any(|m| m.text() == w)
}

/// The scope an ordering qualifier names (`.gpu` when none is written, the PTX default).
pub(super) fn scope_of(ins: &Instruction) -> MemScope {
    if has_word(ins, "cta") {
        MemScope::Cta
    } else if has_word(ins, "sys") {
        MemScope::Sys
    } else {
        MemScope::Gl
    }
}

/// The fences an access with `ins`'s qualifiers needs.
pub(super) fn order_of(ins: &Instruction) -> Order {
    let s = scope_of(ins);
    let w = |x| has_word(ins, x);
    let acquire = w("acquire") || w("acq_rel") || w("sc");
    let release = w("release") || w("acq_rel") || w("sc");
    Order {
        before: release.then_some(s),
        after: acquire.then_some(s),
    }
}

impl FnBuilder<'_, '_> {
    /// The fence before an access, if its qualifiers ask for one.
    pub(super) fn fence_before(&mut self, o: Order) {
        if let Some(s) = o.before {
            self.ins().membar(s);
        }
    }

    /// The fence after an access, if its qualifiers ask for one.
    pub(super) fn fence_after(&mut self, o: Order) {
        if let Some(s) = o.after {
            self.ins().membar(s);
        }
    }
}
