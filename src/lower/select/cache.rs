//! Cache operators and `.volatile` → the SASS cache field of a load or store.
//!
//! In: the IR access's [`CacheOp`] (the PTX operator as written; `.ca` and `.wb`, PTX's
//! defaults, are already `Default`) and the memory instruction [`super::Lowerer::mem_inst`]
//! built. Out: the same instruction with its `cache` field set.
//!
//! The mapping is ptxas 11.8's for sm_50 at `-O3`, read from `cuobjdump -sass` of one kernel
//! per operator, space and width (32, 64 and 128 bits; the widths never change the mode):
//!
//! ```text
//! PTX                          global            generic           local    shared
//! ld (none) / .ca              LDG.E             LD.E              LDL      LDS.U.32
//! ld.cg                        LDG.E.CG          LD.E.CG           LDL      LDS.U.32
//! ld.cs                        LDG.E  (dropped)  LD.E  (dropped)   LDL      LDS.U.32
//! ld.lu                        LDG.E.CG          LD.E.CG           LDL      LDS.U.32
//! ld.cv                        LDG.E.CV          LD.E.CV           LDL      LDS.U.32
//! ld.volatile                  LDG.E.CV          LD.E.CV           error    LDS.U.32
//! ld.global.nc{,.ca,.cg,.cs}   LDG.E.CI          -                 -        -
//! ld.global.nc.lu              error ("Illegal cache operation for instruction 'ld.nc'")
//! st (none) / .wb              STG.E             ST.E              STL      STS
//! st.cg                        STG.E.CG          ST.E.CG           STL      STS
//! st.cs                        STG.E.CS          ST.E.CS           STL      STS
//! st.wt                        STG.E.WT          ST.E.WT           STL      STS
//! st.volatile                  STG.E.WT          ST.E.WT           error    STS
//! ```
//!
//! So `.lu` on a load is `.CG` and `.cs` on a load is dropped, while `.cs` on a store is
//! kept; volatile is `.CV` for loads and `.WT` for stores; `.nc` wins over any operator after
//! it. Local and shared accesses never get a mode (the LDL field's `.LU`/`.CI`/`.CV` and the
//! STL field's `.CG`/`.CS`/`.WT` stay unused), and ptxas rejects `.volatile` on `.local`
//! ("Modifier '.volatile' cannot be applied to '.local' space"), as `ir::build` does.
//! (`.U.128`, which ptxas also prints on some 128-bit loads, is a size code, not a cache
//! mode.) The `.L1::`/`.L2::` qualifiers need sm_70/sm_75, so ptxas rejects them for sm_5x;
//! `.relaxed`/`.acquire`/`.release` (sm_70) are taken as volatile, their sm_5x analogue.
//!
//! Order: a `.CV` load or a `.WT` store (volatile, `.cv`, `.wt`) keeps its place among the
//! accesses of the spaces it may alias (`sm50::sched::list`): the only sign of volatile
//! the SASS carries. A volatile shared access carries none (`LDS.U.32`/`STS` as ptxas), so
//! it gets the ordinary rule there. Nothing before the scheduler merges, hoists or drops
//! loads (every load and store is a selection root).
//!
//! `ir::eval` and the simulator treat every mode as a plain access (no caches are modelled).

use crate::ir::CacheOp;
use crate::sm50::{self, Field, Form};

/// The cache field code of `form` for `cache`, as the table above; 0 (none) for the
/// local and shared forms and for operators a form cannot take.
pub(crate) fn code(form: Form, cache: CacheOp) -> u64 {
    match form {
        // -, .CG, .CI, .CV
        Form::LDG | Form::LD => match cache {
            CacheOp::Cg | CacheOp::Lu => 1,
            CacheOp::Nc => 2,
            CacheOp::Cv | CacheOp::Volatile => 3,
            CacheOp::Default | CacheOp::Cs | CacheOp::Wt => 0,
        },
        // -, .CG, .CS, .WT
        Form::STG | Form::ST => match cache {
            CacheOp::Cg => 1,
            CacheOp::Cs => 2,
            CacheOp::Wt | CacheOp::Volatile => 3,
            CacheOp::Default | CacheOp::Lu | CacheOp::Cv | CacheOp::Nc => 0,
        },
        _ => 0,
    }
}

/// Set `inst`'s cache field for `cache` (global and generic forms only).
pub(crate) fn set_field(inst: &mut sm50::Inst, cache: CacheOp) {
    let c = code(inst.form, cache);
    if c != 0 {
        inst.set(Field::Cache, c);
    }
}
