//! The machine model every scheduling pass shares: what an instruction reads and writes,
//! how long its results take, which instructions transfer control or must stay in place,
//! where an instruction sits in the laid-out text, and the control-flow successors of
//! decoded code.
//!
//! In: SM50 instructions ([`Inst`]) and their forms' table ([`crate::sm50::FORMS`]).
//! Out: facts about them; nothing here decides a schedule or a control code.
//!
//! Who depends on it: the list scheduler ([`super::list`]), the control-code assigner
//! ([`super`]), the static cost model ([`super::cost`]) and the hazard checker
//! ([`super::check`]) each import this module and none imports another's internals (the
//! assigner calls the checker's public entry points to check its own result, and the layout,
//! [`super::bundle`], runs the scheduler and then the assigner). The fixed latencies come
//! from sm50-isa.md §2.2 (stall counts ptxas uses between dependent instructions); the class
//! facts (control flow, fences, minimum stalls, the modelled cycles of variable-latency
//! results, which only steer the scheduler and the cost model: correctness rests on
//! scoreboards, which the checker follows) are the class attributes of `isa/sm50.isa`
//! ([`crate::sm50::Props`]).
//!
//! Invariants: every per-form table is indexed by `Inst::form` and computed once from the
//! form's class; [`Res`] numbers GPRs 0..=254, predicates from [`PRED`] and the carry flag
//! [`CC`], so one array of [`NUM_RES`] entries covers every register-like resource.

use crate::sm50::{
    self, Bundle, Ctrl, DecodeError, Fence, Field, FieldKind, Form, FormInfo, Inst, Operand,
};

pub use crate::sm50::ctrl::inst_addr;

/// Cycles from a fixed-latency GPR or carry-flag write to its first reader.
pub const LAT_GPR: u32 = 6;
/// Cycles from a fixed-latency predicate write to its first reader.
pub const LAT_PRED: u32 = 13;
/// Cycles from setting a scoreboard to the first instruction waiting on it.
pub const LAT_BARRIER: u32 = 2;

/// A register-like resource: GPR 0..=254, predicate P0..P6 at `PRED + p`, the carry flag.
pub type Res = usize;
pub const PRED: Res = 256;
pub const CC: Res = 264;
pub const NUM_RES: usize = 265;

/// The registers an instruction reads and writes, as [`Res`] indices (RZ and PT excluded).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    pub uses: Regs,
    pub defs: Regs,
    /// The subset of `uses` that a variable-latency instruction may read after issue (GPRs
    /// and the carry flag; not predicates, not the guard).
    pub late_uses: Regs,
}

/// A short list of [`Res`]: inline up to eight (an access is computed per instruction by
/// the scheduler and again by the checker; heap vectors there were a visible cost).
pub type Regs = smallvec::SmallVec<[Res; 8]>;

/// What `inst` reads and writes, including its guard predicate.
pub fn access(inst: &Inst) -> Access {
    let mut a = Access::default();
    access_into(inst, &mut a);
    a
}

/// [`access`] written into `a` (emptied first): the layout fills its table in place, where
/// returning each access copied it (three inline lists) into the table.
pub(crate) fn access_into(inst: &Inst, a: &mut Access) {
    a.uses.clear();
    a.defs.clear();
    a.late_uses.clear();
    if let (Some(pg), Some(_)) = (inst.get(Field::Pg), inst.get(Field::Pgn)) {
        if pg != 7 {
            a.uses.push(PRED + pg as usize);
        }
    }
    if inst.form == Form::JCAL {
        // A call of code the scheduler does not see (a system function, docs/calls.md): it
        // reads its arguments and may read or overwrite any register, so every write and
        // every late read in flight must be over before it issues (ptxas 11.8 waits on
        // every scoreboard there). The callee returns with nothing in flight.
        for r in 0..255 {
            a.uses.push(r);
            a.defs.push(r);
        }
        for p in 0..7 {
            a.uses.push(PRED + p);
            a.defs.push(PRED + p);
        }
        a.uses.push(CC);
        a.defs.push(CC);
        return;
    }
    inst.operands(|o| match o {
        Operand::Reg { reg, width, def } => {
            for r in reg as usize..(reg as usize + width as usize).min(255) {
                if def {
                    a.defs.push(r);
                } else {
                    a.uses.push(r);
                    a.late_uses.push(r);
                }
            }
        }
        Operand::Pred { pred, def } => {
            if def {
                a.defs.push(PRED + pred as usize)
            } else {
                a.uses.push(PRED + pred as usize)
            }
        }
        Operand::Cc { def } => {
            if def {
                a.defs.push(CC)
            } else {
                a.uses.push(CC);
                a.late_uses.push(CC);
            }
        }
    });
}

/// A value per form, computed once from its [`FormInfo`]: the scheduler and the checker ask
/// questions of every instruction's class, and comparing the class strings each time was a
/// visible share of their time.
pub(crate) fn per_form<T>(
    cell: &'static std::sync::OnceLock<Vec<T>>,
    f: impl FnMut(&'static FormInfo) -> T,
) -> &'static [T] {
    cell.get_or_init(|| crate::sm50::FORMS.iter().map(f).collect())
}

/// Latency of a fixed-latency write to `r`.
pub fn fixed_latency(r: Res) -> u32 {
    if (PRED..CC).contains(&r) {
        LAT_PRED
    } else {
        LAT_GPR
    }
}

/// Whether the instruction transfers control (the next instruction starts a block).
pub fn is_control(inst: &Inst) -> bool {
    inst.info().props.transfer
}

/// Whether `inst` is a texture instruction (`space=texture`). Texture fetches read their
/// coordinates at issue and the texture unit writes the result long after, so a reuse flag
/// on a coordinate register the fetch overwrites is legal (ptxas sets it on
/// `TEXS.T RZ, R13, R13, R8`; the hazard checker reports it for every other instruction);
/// the control-code assigner batches them (`.P`/`.T`).
pub fn is_texture(inst: &Inst) -> bool {
    inst.info().props.space == sm50::MemSpace::Texture
}

/// The stall ptxas always puts after this instruction (0 = no minimum of its own).
///
/// A guarded `EXIT` (`@P0 EXIT`, the bounds test at the top of nearly every kernel) gets the
/// 13 of a branch rather than the class's 15: every guarded EXIT of ptxas 11.8's code for
/// the corpus-nvcc kernels carries S13 (223 of them; a few S05 next to stores, never S15),
/// while the unguarded final EXIT keeps S15 (259 of 259). The lanes that stay run on two
/// cycles sooner per warp; the lanes that leave do not care. Trade-off: none found; the
/// stall still covers the fixed latencies the next block reads (`assign_block` raises it).
pub fn min_stall_after(inst: &Inst) -> u8 {
    let min = inst.info().props.min_stall;
    if inst.info().props.flow == sm50::Flow::Exit && may_skip(inst) {
        min.min(LAT_PRED as u8)
    } else {
        min
    }
}

/// An operand-free control transfer (`BRA` with no guard, `EXIT`, ...): as a block leader it
/// needs no waits, because it reads and writes nothing and the block it transfers to waits
/// for itself. (ptxas's `BRA self` after the final `EXIT` carries no wait.)
pub fn bare_transfer(inst: &Inst, access: &Access) -> bool {
    is_control(inst) && access.uses.is_empty() && access.defs.is_empty()
}

/// Which instructions start a block: index 0, branch targets, and every instruction after a
/// control transfer. `targets[i]` is the target index of branch `i` (out-of-range ignored).
pub fn leaders(insts: &[Inst], targets: &[Option<usize>]) -> Vec<bool> {
    let mut l = vec![false; insts.len()];
    if let Some(first) = l.first_mut() {
        *first = true;
    }
    for (i, inst) in insts.iter().enumerate() {
        if let Some(Some(t)) = targets.get(i) {
            if *t < insts.len() {
                l[*t] = true;
            }
        }
        if is_control(inst) && i + 1 < insts.len() {
            l[i + 1] = true;
        }
    }
    l
}

/// Cycles after which a read barrier is modelled as clear (sources read).
pub const READ_LATENCY: u64 = 20;

/// Modelled cycles from issue to result of a variable-latency instruction (the table in [`super::cost`]'s essay).
pub fn latency(inst: &Inst) -> u64 {
    u64::from(inst.info().props.cycles)
}

/// Whether `inst` must stay in place relative to every other instruction of its block.
pub fn is_fence(inst: &Inst) -> bool {
    match inst.info().props.fence {
        Fence::No => false,
        Fence::Yes => true,
        // Clock and timer reads observe time; every other special register is constant.
        Fence::Clock => matches!(inst.get(Field::Sr), Some(1 | 0x50..=0x53) | None),
    }
}

/// Whether `inst` may not take effect in some lanes: a guard other than `PT`, or a `BRA`,
/// `BRK` or `EXIT` on a condition-code test. (For control flow, such an instruction also falls through.)
pub(crate) fn may_skip(inst: &Inst) -> bool {
    let pg = inst.get(Field::Pg).unwrap_or(7);
    let pgn = inst.get(Field::Pgn).unwrap_or(0);
    let cc = if matches!(inst.form, Form::BRA | Form::BRK | Form::EXIT) {
        inst.get(Field::Cc).unwrap_or(15)
    } else {
        15
    };
    !(pg == 7 && pgn == 0) || cc != 15
}

/// How an instruction's class takes part in [`successors`] (`flow=` in `isa/sm50.isa`).
pub(crate) use crate::sm50::Flow;

/// [`Flow`] of the form numbered `form`.
fn flow(form: usize) -> Flow {
    crate::sm50::FORMS[form].props.flow
}

/// The successors of each instruction, and whether it is reachable code at all.
pub(crate) fn successors(insts: &[Inst], targets: &[Option<usize>]) -> Vec<Succ> {
    let n = insts.len();
    let target = |k: usize| targets.get(k).copied().flatten().filter(|&t| t < n);
    let flows: Vec<Flow> = insts.iter().map(|i| flow(i.form as usize)).collect();
    let guarded = |k: usize| may_skip(&insts[k]);
    // The reconvergence point of a SYNC (BRK): the target of the innermost SSY (PBK) before
    // it whose target lies after it (ptxas's code is structured so); every such target when
    // none encloses it.
    // (The fallback lists are gathered once, not per SYNC / BRK: that was quadratic.)
    // The SSY (PBK) instructions in layout order, and their targets.
    let positions = |c: Flow| -> Vec<usize> { (0..n).filter(|&j| flows[j] == c).collect() };
    let (ssy_at, pbk_at) = (positions(Flow::Ssy), positions(Flow::Pbk));
    let all_of = |at: &[usize]| -> Vec<usize> { at.iter().filter_map(|&j| target(j)).collect() };
    let (all_ssy, all_pbk) = (all_of(&ssy_at), all_of(&pbk_at));
    // (The search looks at the SSYs (PBKs) before `k`, nearest first, not at every
    // instruction before `k`.)
    let matching = |k: usize, at: &[usize], all: &[usize]| -> Vec<usize> {
        at[..at.partition_point(|&j| j < k)]
            .iter()
            .rev()
            .find(|&&j| target(j).is_some_and(|t| t > k))
            .and_then(|&j| target(j))
            .map_or_else(|| all.to_vec(), |t| vec![t])
    };
    // A RET returns after the CALs of its own subroutine: the one starting at the greatest
    // CAL target at or before it (subroutines follow the kernel body in ptxas's layout);
    // after every CAL when no target precedes it.
    let cals: Vec<(usize, usize)> = (0..n)
        .filter(|&k| flows[k] == Flow::Cal && k + 1 < n)
        .filter_map(|k| target(k).map(|t| (k, t)))
        .collect();
    let returns = |k: usize| -> Vec<usize> {
        let start = cals.iter().map(|&(_, t)| t).filter(|&t| t <= k).max();
        cals.iter()
            .filter(|&&(_, t)| start.map_or(true, |s| s == t))
            .map(|&(c, _)| c + 1)
            .collect()
    };
    // Every block leader, for BRX (found only when there is one: most functions have none).
    let all_leaders: Vec<usize> = if flows.contains(&Flow::Brx) {
        let leaders = leaders(insts, targets);
        (0..n).filter(|&k| leaders[k]).collect()
    } else {
        Vec::new()
    };
    (0..n)
        .map(|k| {
            let mut s = Succ::new();
            let c = flows[k];
            let ends = matches!(
                c,
                Flow::Bra | Flow::Exit | Flow::Ret | Flow::Sync | Flow::Brk | Flow::Brx
            );
            if (!ends || guarded(k)) && k + 1 < n {
                s.push(k + 1);
            }
            match c {
                Flow::Bra | Flow::Cal => s.extend(target(k)),
                Flow::Sync => s.extend(matching(k, &ssy_at, &all_ssy)),
                Flow::Brk => s.extend(matching(k, &pbk_at, &all_pbk)),
                Flow::Ret => s.extend(returns(k)),
                Flow::Brx => s.extend(all_leaders.iter().copied()),
                _ => {}
            }
            // (Only a branch adds a second successor; one alone is sorted.)
            if s.len() > 1 {
                s.sort_unstable();
                s.dedup();
            }
            s
        })
        .collect()
}

/// One instruction's [`successors`]: inline up to two (nearly every instruction has one or
/// two; a heap vector per instruction was an allocation and a free each).
pub(crate) type Succ = smallvec::SmallVec<[usize; 2]>;

/// The register a reuse slot (0 = A, 1 = B, 2 = C) of `inst` reads, if any: the register
/// field encoded at bits 8, 20 or 39.
pub(crate) fn slot_reg(inst: &Inst, slot: usize) -> Option<u64> {
    // The field of each slot, per form, found once (the search of the form's fields ran
    // for every slot of every instruction the reuse passes looked at).
    static SLOTS: std::sync::OnceLock<Vec<[Option<usize>; 3]>> = std::sync::OnceLock::new();
    let slots = per_form(&SLOTS, |info| {
        [8, 20, 39].map(|start| {
            info.fields.iter().position(|f| {
                matches!(f.kind, FieldKind::Reg) && f.bits.first() == Some(&(start, 8))
            })
        })
    });
    slots[inst.form as usize][slot]
        .map(|k| u64::from(inst.f[k]))
        .filter(|&r| r != 255)
}

/// Whether `inst` reads a constant bank operand.
pub(crate) fn reads_cbuf(inst: &Inst) -> bool {
    inst.get(Field::Cbk).is_some()
}

/// Instructions, their control fields and branch targets (instruction indices), as
/// [`check_hazards`] takes them.
pub type DecodedText = (Vec<Inst>, Vec<Ctrl>, Vec<Option<usize>>);

/// Decode a kernel's `.text` words (bundles of a control word and three instructions) into
/// instructions, their control fields and their branch targets (instruction indices), and
/// drop the NOP padding after the last instruction. A BRA/SSY/PBK/CAL target in slot 0 may be
/// encoded as its bundle's base (ptxas's habit); both spellings give the same index.
pub fn decode_text(code: &[u64]) -> Result<DecodedText, DecodeError> {
    let mut insts = Vec::new();
    let mut ctrl = Vec::new();
    for b in code.chunks(4) {
        let c = Bundle::split_ctrl(b[0]);
        for (k, &word) in b.iter().skip(1).enumerate() {
            insts.push(sm50::decode(word)?);
            ctrl.push(c[k]);
        }
    }
    let mut targets = vec![None; insts.len()];
    for (n, i) in insts.iter().enumerate() {
        if matches!(i.form, Form::BRA | Form::SSY | Form::PBK | Form::CAL) {
            let Some(rel) = i.get(Field::Rel) else {
                continue;
            };
            let addr = inst_addr(n);
            let mut t = addr.wrapping_add(8).wrapping_add(sm50::rt::sext(rel, 24));
            if t % 32 == 0 {
                t += 8;
            }
            targets[n] = sm50::ctrl::inst_index(t);
        }
    }
    let live = insts.len()
        - insts
            .iter()
            .rev()
            .take_while(|i| i.form == Form::NOP)
            .count();
    insts.truncate(live);
    ctrl.truncate(live);
    targets.truncate(live);
    Ok((insts, ctrl, targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guarded EXIT stalls 13 (as ptxas's every guarded EXIT), the final one 15; `@PT`
    /// is no guard, `@!PT` is.
    #[test]
    fn guarded_exit_stalls_like_a_branch() {
        let exit = |pg: u64, neg: u64| {
            Inst::new(Form::EXIT)
                .with(Field::Pg, pg)
                .with(Field::Pgn, neg)
        };
        assert_eq!(min_stall_after(&exit(7, 0)), 15);
        assert_eq!(min_stall_after(&exit(0, 0)), 13);
        assert_eq!(min_stall_after(&exit(1, 1)), 13);
        assert_eq!(min_stall_after(&exit(7, 1)), 13);
        let bar = Inst::new(Form::BAR).with(Field::Pg, 0);
        assert_eq!(min_stall_after(&bar), bar.info().props.min_stall);
    }
}
