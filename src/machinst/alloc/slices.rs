//! The class slices' search of the allocator: each class gets registers of its own, sized from
//! the pressure; after each regalloc2 attempt ([`attempt`]) the strategies of [`SliceSearch`]
//! grow the classes, try the fixed registers last or spread scalars over other classes, until
//! an attempt none of them can improve.
//!
//! In: prepared code, its fixed registers and the pressure. Out: the class sizes to try next,
//! or the attempt to take. Invariant: no size is grown from twice and each once-only strategy
//! runs at most once, so the search ends.

use super::*;

/// The class-slice attempts of [`allocate_owned`]: the sizes asked of each class and what the
/// attempts so far have tried. Each method is one strategy: it says whether it changed the
/// request (then [`allocate_owned`] makes another attempt).
pub(super) struct SliceSearch {
    /// The register kind each class holds (see [`overflow_scalars`]).
    pub(super) kinds: [RegKind; 3],
    pub(super) press: Pressure,
    /// Registers asked of each class, and the least each must have.
    pub(super) want: [usize; 3],
    pub(super) min_needed: [usize; 3],
    /// The sizes of the last attempt a strategy grew from (no size is tried twice).
    pub(super) last_sizes: Option<[usize; 3]>,
    /// Registers regalloc2 tries last, once [`SliceSearch::try_fixed_registers_last`] has
    /// set them (empty: tried and not granted).
    pub(super) last_regs: Option<Vec<(RegKind, PhysReg)>>,
    /// Whether the scalars have been spread over the other classes (once).
    pub(super) spread: bool,
}

/// One attempt of the class slices: the fixed operands resolved to `classes`' registers,
/// regalloc2 run on them (with the search's last registers tried last). Returns the machine
/// environment, regalloc2's output and which classes spilled.
pub(super) fn attempt<I: MachInst>(
    vc: &mut VCode<I>,
    classes: &[Vec<u8>; 3],
    fixed: &[(RegKind, PhysReg)],
    search: &SliceSearch,
    ra_opts: &ra::RegallocOptions,
) -> Result<(ra::MachineEnv, ra::Output, [bool; 3]), AllocError> {
    resolve_fixed_in(vc, classes, fixed)?;
    let env = machine_env(classes, search.last_regs.as_deref().unwrap_or_default());
    let out = run_ra(vc, &env, ra_opts)?;
    let mut spilled = [false; 3];
    for (_, ra::Edit::Move { from, to }) in &out.edits {
        for (a, other) in [(from, to), (to, from)] {
            if a.is_stack() {
                if let Some(r) = other.as_reg() {
                    spilled[class_of(r.class())] = true;
                }
            }
        }
    }
    Ok((env, out, spilled))
}

impl SliceSearch {
    /// The registers of each class for the sizes asked, under the budget.
    pub(super) fn fit(
        &self,
        fixed: &[(RegKind, PhysReg)],
        max_regs: u8,
        reserve0: bool,
    ) -> Result<[Vec<u8>; 3], AllocError> {
        fit_sizes(
            &self.kinds,
            self.want,
            self.min_needed,
            fixed,
            max_regs,
            reserve0,
        )
    }

    /// A class with fewer registers than values live at one point must spill (a spill edit
    /// in that class): the attempt would be thrown away, so it is not made and the sizes grow
    /// as that spill would make them grow.
    pub(super) fn grow_where_spill_is_certain(&mut self, sizes: [usize; 3]) -> bool {
        let must_spill: [bool; 3] = [0, 1, 2].map(|c| self.press.exact[c] > sizes[c]);
        self.grow(sizes, must_spill)
    }

    /// Code with fixed registers (calls) that spills is allocated again with the fixed
    /// operands' registers tried last, and as many registers more in their class (so that as
    /// many are tried first as before), once. regalloc2 spreads values over every register
    /// of a class; a long-lived value that sits in a register a call's operand is fixed to
    /// is evicted by that operand, and where no other register is free over the evicted
    /// value's whole range, its pieces between uses go to the stack: a spill at low
    /// pressure. Not done from the start: where nothing spills, spreading values over all the
    /// registers makes fewer false dependencies for the scheduler.
    pub(super) fn try_fixed_registers_last<I: MachInst>(
        &mut self,
        vc: &VCode<I>,
        sizes: [usize; 3],
        spilled: [bool; 3],
        fixed: &[(RegKind, PhysReg)],
        max_regs: u8,
        reserve0: bool,
    ) -> bool {
        let any_spill = spilled.iter().any(|s| *s);
        if !any_spill || self.last_regs.is_some() || fixed.is_empty() {
            return false;
        }
        let regs = fixed_operand_regs(&vc.insts);
        let mut bigger = self.want;
        for (c, b) in bigger.iter_mut().enumerate() {
            let n = in_class(&regs, c);
            if n > 0 {
                *b = (sizes[c] + n).min(64);
            }
        }
        // Not where `max_regs` holds the classes down: there fewer registers tried first
        // would only spill more.
        let granted = fit_sizes(
            &self.kinds,
            bigger,
            self.min_needed,
            fixed,
            max_regs,
            reserve0,
        )
        .is_ok_and(|l| (0..3).all(|c| l[c].len() >= bigger[c]));
        if granted && !regs.is_empty() {
            self.last_regs = Some(regs);
            self.want = bigger;
            return true;
        }
        self.last_regs = Some(Vec::new());
        false
    }

    /// The classes that spilled grow.
    pub(super) fn grow_spilled(&mut self, sizes: [usize; 3], spilled: [bool; 3]) -> bool {
        self.grow(sizes, spilled)
    }

    /// The 32-bit class holds the fixed registers besides the values: where it spills at its
    /// largest size, a class the code does not use takes scalars too (as for more than 64
    /// live scalars before the attempts), once; the sizes start again from the new pressure.
    pub(super) fn overflow_scalars_once<I: MachInst>(
        &mut self,
        vc: &mut VCode<I>,
        spilled: [bool; 3],
        fixed: &[(RegKind, PhysReg)],
    ) -> Result<bool, AllocError> {
        if !spilled[0] || fixed.is_empty() || self.spread {
            return Ok(false);
        }
        self.spread = true;
        let Some(k) = overflow_scalars(vc, fixed, false).map_err(AllocError::Invalid)? else {
            return Ok(false);
        };
        self.kinds = k;
        self.press = pressure(vc);
        (self.want, self.min_needed) = start_sizes(vc, &self.press, fixed);
        self.last_sizes = None;
        Ok(true)
    }

    /// Grow the classes `which` from `sizes` by half (and 4), up to 64; `false` (nothing
    /// changed) when none of them can grow or these sizes were grown from already.
    pub(super) fn grow(&mut self, sizes: [usize; 3], which: [bool; 3]) -> bool {
        let grows = (0..3).any(|c| which[c] && sizes[c] < 64);
        if !grows || self.last_sizes == Some(sizes) {
            return false;
        }
        self.last_sizes = Some(sizes);
        for c in 0..3 {
            if which[c] {
                self.want[c] = (sizes[c] + sizes[c] / 2 + 4).min(64);
            }
        }
        true
    }

    /// Whether the spills of the attempt taken could not be helped: a class that spilled at
    /// 64 registers with more values (and fixed registers) live at once than 64.
    pub(super) fn forced(
        &self,
        sizes: [usize; 3],
        spilled: [bool; 3],
        fixed: &[(RegKind, PhysReg)],
    ) -> bool {
        (0..3).any(|c| {
            let fixed_in = in_class(fixed, c);
            spilled[c] && sizes[c] == 64 && self.press.exact[c] + fixed_in > 64
        })
    }
}
