//! Physical registers for regalloc2's output: one colouring of all widths together.
//!
//! In: a [`VCode`] and regalloc2's [`ra::Output`] for it, where every register is a *name*
//! (class, index): 32-bit values in class `Int`, pairs in `Float`, quads in `Vector` (and,
//! where more than 64 scalars are live at once, scalars in the other classes too, see
//! `alloc::overflow_scalars`), at most 64 names per class, [`NAMES`] in all. A name may thus
//! hold values of different widths at different points: every access carries the width of
//! its value ([`NameProg::acc_widths`]), and every web the width of its accesses. At the name level there is no aliasing: regalloc2
//! has decided which name every operand, move, spill and reload uses, and its checker has
//! verified that.
//! Out: [`NameProg`], the function as a flat list of steps (instructions and regalloc2's edits,
//! in the order `block_insts_and_edits` yields them) each with its register accesses, and
//! [`colour`]: a physical base register for every access such that
//! * every access of one *web* gets the same register (a web is the set of definitions and
//!   uses of one name that reach each other: a value's name between a definition and its
//!   uses, joined across blocks where the name is live on the edge, and a reuse def joined to
//!   the use it reuses);
//! * two webs that interfere (one is defined where the other is live, or the two meet in one
//!   instruction where an early def or a late use forbids sharing) get disjoint ranges
//!   `base..base + width`, whatever their widths: a pair at R4 and a scalar at R5 interfere;
//! * pairs get even bases and quads multiples of 4, R1 (the stack pointer) and RZ are never
//!   given, every register is below `max_regs`, and the names regalloc2 was made to use for
//!   fixed registers (a call's operands and clobbers) keep their register. Webs of clobbers
//!   only hold no value: they neither count in the register count nor may lift the colouring
//!   over `max_regs` (a `JCAL` clobbers up to R59; counted, they made a kernel calling
//!   vprintf spread its values up to R55).
//!
//! The graph is built the classic way (Chaitin): walking each block backward with the set of
//! live names, each definition interferes with every web live after it, except, for a copy
//! (regalloc2's moves and the ISA's register moves), the copy's source: the two hold the same
//! value, so they may share a register, and sharing it makes the move disappear. Webs are then
//! coloured greedily, precoloured first, in two orders (by first appearance in the code, and
//! widest first): each takes its copy partner's register when that is free, else the lowest
//! free aligned base; the order that uses fewer registers wins. That finds how few registers
//! suffice (K), not a good choice among them: packing every web into the lowest free register
//! reuses registers as soon as they die, and each reuse is an ordering the scheduler must keep
//! (measured: static cycles up to 4 times worse where loads could no longer be hoisted). So
//! the webs are coloured once more, by first appearance, each in the free register whose
//! previous webs ended earliest in the code, within a budget of registers that keeps the
//! occupancy of K (and no more than the caller's hint, about what class slices would take),
//! growing the budget while that greedy colouring fails, up to the occupancy limit; where it
//! fails there too (its choices fragment the registers for pairs), the packing is done once
//! more under that limit, each web in the lowest free register but one a store still reads.
//! In both, a register whose last value a store (an instruction reading its sources after
//! issue, [`super::MachInst::reads_late`]) read a few instructions before is taken last: the
//! new value's write would wait on the store's read scoreboard. A greedy
//! colouring can fail (more registers than `max_regs`): [`colour`] then returns `None` and the
//! caller falls back to an allocation that fits by construction.
//!
//! Register banks (Maxwell reads `R % 4` from one of four banks; an instruction whose sources
//! come from one bank twice waits a cycle per repeat): in that last colouring each web takes,
//! among the free registers, one whose banks the webs already coloured that instructions read
//! together with it ([`Webs::co_reads`]) use least, and only then the one free longest. A copy
//! partner's register still comes first (it removes an instruction). Greedy in that order, a
//! web sees only the webs coloured before it, so [`improve_banks`] then moves each web still in
//! conflict to the free register (below the count reached) where it is least. Where registers
//! are scarce no register is free for it over its whole life in a better bank, so it then
//! exchanges registers with another web of its width ([`exchange_banks`]): `w` takes `v`'s
//! register where no neighbour of `w` but `v` is, and `v` takes `w`'s the same way. That
//! keeps the set of registers taken (so the count and the callee saves), every interference
//! and every coalesced copy (webs on a copy partner's register, pinned webs and webs with
//! part-copy ends never move), and is made only where the same-bank reads of the two fall.
//! Moves and exchanges alternate until neither improves (at most 4 passes). All of this
//! lowers the share of instructions that read one bank twice (`leafold compare`'s bank line).
//! An exchange never writes a web where a store read the previous value just before (the
//! late-read rule of the colouring). Measured with the exchange (`leafold compare`, same
//! instructions and registers): the older corpus 1,473 -> 1,289 (ptxas 1,320; about a
//! hundred kernels fewer, imageDenoising's `NLM2diag` 47 -> 23, rodinia's `hwt` 47 -> 35),
//! corpus-nvcc 3,457 -> 3,070 (ptxas 4,444), the cuda-apps set 185 -> 171. `sm50::banks`
//! still rotates quads afterwards where that helps.
//! Left: conflicts that only a joint move of three or more webs removes (imageDenoising's
//! `NLM2`: a weight read with each word of a texture's quad and with three running sums, every
//! bank of the weight meets one of them), and a running sum that stays in one register
//! beside a quad read word by word (matrixMul's `FFMA R20, R4, R25, R20`), where ptxas
//! writes each step's sum into the quad word just read.
//!
//! What "read together" means is per *machine* instruction: an instruction of several pieces
//! (the three `XMAD`s of a 32-bit multiply, `XMAD t, a, b ; XMAD.MRG u, a, b.H1 ;
//! XMAD.PSL.CBCC d, a.H1, u.H1, t`) reads in each piece some of its uses and some of its own
//! earlier defs (the temporaries `t` and `u`, early defs for regalloc2).
//! [`super::MachInst::read_groups`] lists them per piece, and [`co_reads`] pairs the webs of
//! each piece; before, the temporaries had no co-reads at all, took the bank of the factor,
//! and the `XMAD`s were the largest share of the conflicts left (982 of 2,806 on the corpus,
//! counted on the listing, against ptxas's 187). With the pieces seen (`leafold compare`, same
//! instructions): `tests/data/corpus` 3.7 % -> 2.3 % (2,769 -> 1,703 of 74,842; ptxas 1.4 %),
//! `tests/data/corpus-nvcc` 3.0 % -> 2.3 % (6,274 -> 4,735 of 206,641; ptxas 3.2 %).
//!
//! Code that keeps the class slices (large kernels that spill, such as MC-GPU's
//! `track_particles` or cub's radix-sort downsweep kernels) gets the same care after the
//! slices are packed: names of one class exchange registers ([`permute_slices`], a renaming
//! that keeps everything the slices guaranteed), then [`improve_slice_banks`] moves single
//! webs as [`improve_banks`] does. Both also count regalloc2's spills, `STL [R1+x], R`, as
//! reading R1's bank ([`Webs::spill_reads`]), which the colouring does too. Measured
//! (`leafold compare`, same instructions and registers): corpus-nvcc 5,099 -> 3,301 (ptxas
//! 4,444; the radix sort's three downsweep kernels had 1,342 more than ptxas, of which 521
//! spills), the older corpus 1,688 -> 1,328 (ptxas 1,320).
//!
//! Left: a `DFMA` reading three distinct pairs always
//! reads one bank twice (pairs sit in banks 0-1 or 2-3), which ptxas's code shows as well.
//! Reuse flags: a source the previous instruction marked `.reuse` in the same slot comes from
//! the operand reuse cache, not from its bank; `compare` counts both sides without that rule
//! (the same way on both), and with it both rates fall (ours more: the `XMAD` sequences reuse
//! their factors).
//!
//! Part copies: an ISA copy of one word of a pair or quad into a 32-bit value (what a call's
//! lowering writes for each argument word, into a value pinned to its ABI register) makes no
//! edge between its two webs at the copy; they are [`Webs::parts`] instead, which may overlap
//! only word on word (the 32-bit web exactly on the copied word), and the colouring puts one
//! on the other where it can (the pair whose words R4 and R5 take is given R4), so that the
//! copy becomes `MOV R4, R4` and is dropped. Where the two interfere elsewhere (both live where
//! one is written) the edge stays.
//!
//! Pack copies, the other direction: an instruction that only copies 32-bit values into the
//! words of one pair or quad ([`super::MachInst::pack_words`]: `MOV %d.lo, x; MOV %d.hi, y`,
//! how `select::tex` builds `TEXS ... 3D`'s coordinate pair; only those texture operand packs
//! are offered: on other packs the placement cost more bank conflicts than it saved) makes no edge between its early
//! def and the values it copies; each value and the pair are [`Webs::parts`] too, with the
//! value on its word. The colouring gives such a value, while the pair is not coloured yet, a
//! base that leaves the pair aligned and free (`colour_spread`'s `misaligned`), and the next
//! value of the same pair the word beside it (`part_bases`' sibling hint); the pair then
//! takes the words the values are in, each copy is a move onto itself, and `alloc` drops it
//! (`MachInst::drop_identity_copies`). A value still live after the pack keeps its edge (and
//! its copy). Measured on volumeFiltering's `d_render` kernels: two `MOV`s fewer per fetch.
//!
//! Nothing here decides spills: that is regalloc2's (see `alloc`). What is checked: the final
//! code is checked by `check` (which values each physical register holds), not this module.

use super::vcode::VCode;
use super::RegKind;
use regalloc2 as ra;
use regalloc2::Function as _;
mod colouring;
mod slice_banks;
pub(super) use colouring::*;
pub(super) use slice_banks::permute_slices;

/// Names per class and in all (regalloc2 numbers at most 64 registers per class).
pub(super) const PER_CLASS: usize = 64;
pub(super) const NAMES: usize = 3 * PER_CLASS;

/// A set of names.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct NameSet([u64; 3]);

impl NameSet {
    fn insert(&mut self, n: u16) {
        self.0[n as usize / 64] |= 1 << (n % 64);
    }
    fn remove(&mut self, n: u16) {
        self.0[n as usize / 64] &= !(1 << (n % 64));
    }
    fn union(&mut self, o: &NameSet) {
        for k in 0..3 {
            self.0[k] |= o.0[k];
        }
    }
    fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (0..3).flat_map(move |k| {
            let mut w = self.0[k];
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some((k * 64) as u16 + b as u16)
            })
        })
    }
}

/// The name of a regalloc2 register.
pub(super) fn name_of(p: ra::PReg) -> u16 {
    let c = match p.class() {
        ra::RegClass::Int => 0,
        ra::RegClass::Float => 1,
        ra::RegClass::Vector => 2,
    };
    (c * PER_CLASS + p.hw_enc()) as u16
}

/// One register access of a step.
#[derive(Clone, Copy, Debug)]
pub(super) struct Access {
    pub name: u16,
    pub def: bool,
    /// A def written before the step's uses are read.
    pub early: bool,
    /// A use read after the step's defs are written.
    pub late: bool,
    /// A clobber (a def that no value comes out of).
    pub clobber: bool,
    /// For a def: the access (index within the step) whose register it must take.
    pub reuse: Option<u8>,
}

/// What a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StepKind {
    /// Instruction `i` of the VCode: its accesses are its regalloc2 operands in order, then
    /// its clobbers.
    Inst(u32),
    /// regalloc2 move between registers: accesses `[from, to]`.
    Move,
    /// Register to stack: `[from]`.
    Spill,
    /// Stack to register: `[to]`.
    Reload,
}

/// One step with its accesses `accs[start..end]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    pub kind: StepKind,
    pub start: u32,
    pub end: u32,
    /// For a copy: (def access, use access), indices within the step.
    pub copy: Option<(u8, u8)>,
    /// For an ISA copy of one word of a wider value into a 32-bit one: (def access, use
    /// access, word), indices within the step.
    pub part: Option<(u8, u8, u8)>,
    /// For an instruction that copies 32-bit values into the words of a wider one
    /// ([`super::MachInst::pack_words`]): the def access and, per word, the access of the
    /// value copied there (`NO_ACC`: none), indices within the step.
    pub pack: Option<(u8, [u8; 4])>,
    /// For a spill or reload: the stack slot (regalloc2's index, 4-byte words).
    pub slot: u32,
}

/// The function at the level of names (see the module essay).
pub(super) struct NameProg {
    pub steps: Vec<Step>,
    pub accs: Vec<Access>,
    /// Per block, its steps `steps[s..e]`.
    pub blocks: Vec<(u32, u32)>,
    succs: Vec<Vec<u32>>,
    /// GPRs per name of each class: the width of its clobbers and of the values of the
    /// class's own kind (a class may also hold overflow scalars, see `acc_widths`).
    pub widths: [u8; 3],
    /// GPRs of the value each access reads or writes: the operand's kind for an instruction,
    /// the class's width for a clobber, and for regalloc2's moves, spills and reloads the
    /// width of the value the name (or slot) holds there ([`NameProg::edit_widths`]).
    pub acc_widths: Vec<u8>,
    /// Per step, for an instruction of several machine instructions
    /// ([`super::MachInst::read_groups`]): per machine instruction, the accesses (indices
    /// within the step) it reads; `None`: one machine instruction reading the step's uses.
    read_groups: Vec<Option<Vec<smallvec::SmallVec<[u8; 4]>>>>,
    /// Per step, whether it is an instruction that also reads R1 (the stack pointer, not a
    /// name): `STL [R1+x], R`, whose other sources then share a read with bank 1
    /// ([`Webs::spill_reads`], like regalloc2's own spills).
    sp_reads: Vec<bool>,
    /// Per step, whether it is an instruction that reads its sources after issue
    /// ([`super::MachInst::reads_late`]): see [`Webs::late_end`].
    late_reads: Vec<bool>,
}

impl NameProg {
    /// Read regalloc2's output `out` for `vc` (whose class `c` holds values of `kinds[c]`).
    pub(super) fn build<I: super::MachInst>(
        vc: &VCode<I>,
        out: &ra::Output,
        kinds: &[RegKind; 3],
    ) -> Result<NameProg, String> {
        let mut steps = Vec::with_capacity(vc.insts.len() + out.edits.len());
        let mut accs = Vec::with_capacity(out.allocs.len() + 2 * out.edits.len());
        let mut blocks = Vec::with_capacity(vc.num_blocks());
        // 0: an edit's, found by `edit_widths` below
        let mut acc_widths: Vec<u8> = Vec::with_capacity(accs.capacity());
        let mut read_groups = Vec::with_capacity(steps.capacity());
        let mut sp_reads = Vec::with_capacity(steps.capacity());
        let mut late_reads = Vec::with_capacity(steps.capacity());
        let widths = kinds.map(|k| k.gprs() as u8);
        let plain = |name: u16, def: bool| Access {
            name,
            def,
            early: false,
            late: false,
            clobber: false,
            reuse: None,
        };
        for b in 0..vc.num_blocks() {
            let first = steps.len() as u32;
            for item in out.block_insts_and_edits(vc, ra::Block::new(b)) {
                let start = accs.len() as u32;
                let mut copy = None;
                let mut part = None;
                let mut pack = None;
                let mut slot = 0;
                let mut groups = None;
                let mut reads_sp = false;
                let mut reads_late = false;
                let kind = match item {
                    ra::InstOrEdit::Edit(ra::Edit::Move { from, to }) => {
                        if let Some(st) = from.as_stack().or(to.as_stack()) {
                            slot = st.index() as u32;
                        }
                        match (from.as_reg(), to.as_reg()) {
                            (Some(f), Some(t)) => {
                                accs.push(plain(name_of(f), false));
                                accs.push(plain(name_of(t), true));
                                copy = Some((1, 0));
                                StepKind::Move
                            }
                            (Some(f), None) => {
                                accs.push(plain(name_of(f), false));
                                StepKind::Spill
                            }
                            (None, Some(t)) => {
                                accs.push(plain(name_of(t), true));
                                StepKind::Reload
                            }
                            (None, None) => {
                                return Err(format!("unexpected edit {from} -> {to}"));
                            }
                        }
                    }
                    ra::InstOrEdit::Inst(i) => {
                        let ops = vc.inst_operands(i);
                        let allocs = out.inst_allocs(i);
                        for (op, a) in ops.iter().zip(allocs) {
                            let p = a
                                .as_reg()
                                .ok_or_else(|| format!("{} did not get a register", op.vreg()))?;
                            let def = op.kind() == ra::OperandKind::Def;
                            let early = op.pos() == ra::OperandPos::Early;
                            acc_widths.push(vc.vregs[op.vreg().vreg()].gprs().max(1) as u8);
                            accs.push(Access {
                                name: name_of(p),
                                def,
                                early: def && early,
                                late: !def && !early,
                                clobber: false,
                                reuse: match op.constraint() {
                                    ra::OperandConstraint::Reuse(k) => u8::try_from(k).ok(),
                                    _ => None,
                                },
                            });
                        }
                        for p in vc.inst_clobbers(i) {
                            acc_widths.push(widths[name_of(p) as usize / PER_CLASS]);
                            accs.push(Access {
                                clobber: true,
                                ..plain(name_of(p), true)
                            });
                        }
                        groups = access_groups(&vc.insts[i.index()]);
                        vc.insts[i.index()].for_each_operand(&mut |r, spec| {
                            reads_sp |= r == super::Reg::Phys(super::PhysReg::SP)
                                && spec.kind != super::OpKind::Def;
                        });
                        reads_late = vc.insts[i.index()].reads_late();
                        copy = isa_copy(vc, i.index(), ops);
                        part = isa_part_copy(vc, i.index(), ops);
                        pack = isa_pack(vc, i.index(), ops);
                        StepKind::Inst(i.index() as u32)
                    }
                };
                // the edits' accesses
                acc_widths.resize(accs.len(), 0);
                read_groups.push(groups);
                sp_reads.push(reads_sp);
                late_reads.push(reads_late);
                steps.push(Step {
                    kind,
                    start,
                    end: accs.len() as u32,
                    copy,
                    part,
                    pack,
                    slot,
                });
            }
            blocks.push((first, steps.len() as u32));
        }
        let succs = (0..vc.num_blocks())
            .map(|b| vc.succs[b].iter().map(|(t, _)| t.0).collect())
            .collect();
        let mut prog = NameProg {
            steps,
            accs,
            blocks,
            succs,
            widths,
            acc_widths,
            read_groups,
            sp_reads,
            late_reads,
        };
        prog.edit_widths(out.num_spillslots);
        Ok(prog)
    }

    /// The widths of regalloc2's moves, spills and reloads. An edit names only registers and
    /// slots, and where a class holds values of several widths (overflow scalars in the pair
    /// or quad class) the width is that of the value the name holds there: a forward walk
    /// follows, per name and per slot, the width of what was last written into it, from the
    /// instructions' defs (whose widths are their vregs' kinds) through the edits, with the
    /// state at a block's entry taken from its predecessors (regalloc2's own checker has
    /// verified that a value read was written on every path, so predecessors agree on every
    /// name and slot that is read). Repeated until nothing changes (loops); a width still
    /// unknown (never read) is the class's.
    fn edit_widths(&mut self, num_slots: usize) {
        let nb = self.blocks.len();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nb];
        for (b, ss) in self.succs.iter().enumerate() {
            for &t in ss {
                preds[t as usize].push(b);
            }
        }
        // per block, the widths at its end: names, then slots (0 = unknown)
        let size = NAMES + num_slots;
        let mut exit: Vec<Vec<u8>> = vec![Vec::new(); nb];
        let mut state = vec![0u8; size];
        for _round in 0..nb + 2 {
            let mut changed = false;
            for b in 0..nb {
                state.iter_mut().for_each(|x| *x = 0);
                for &p in &preds[b] {
                    for (x, &y) in state.iter_mut().zip(&exit[p]) {
                        if *x == 0 {
                            *x = y;
                        }
                    }
                }
                let (s, e) = self.blocks[b];
                for step in &self.steps[s as usize..e as usize] {
                    let a = step.start as usize;
                    let slot = NAMES + step.slot as usize;
                    match step.kind {
                        StepKind::Inst(_) => {
                            for k in a..step.end as usize {
                                if self.accs[k].def {
                                    state[self.accs[k].name as usize] = self.acc_widths[k];
                                }
                            }
                        }
                        StepKind::Move => {
                            let w = state[self.accs[a].name as usize];
                            self.acc_widths[a] = w;
                            self.acc_widths[a + 1] = w;
                            state[self.accs[a + 1].name as usize] = w;
                        }
                        StepKind::Spill => {
                            let w = state[self.accs[a].name as usize];
                            self.acc_widths[a] = w;
                            if slot < size {
                                state[slot] = w;
                            }
                        }
                        StepKind::Reload => {
                            let w = state.get(slot).copied().unwrap_or(0);
                            self.acc_widths[a] = w;
                            state[self.accs[a].name as usize] = w;
                        }
                    }
                }
                if exit[b] != state {
                    exit[b].clone_from(&state);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (w, acc) in self.acc_widths.iter_mut().zip(&self.accs) {
            if *w == 0 {
                *w = self.widths[acc.name as usize / PER_CLASS];
            }
        }
    }

    /// The names live into each block.
    fn live_in(&self) -> Vec<NameSet> {
        let n = self.blocks.len();
        let mut gen = vec![NameSet::default(); n];
        let mut kill = vec![NameSet::default(); n];
        for b in 0..n {
            let (s, e) = self.blocks[b];
            let (g, k) = (&mut gen[b], &mut kill[b]);
            for step in self.steps[s as usize..e as usize].iter().rev() {
                let accs = &self.accs[step.start as usize..step.end as usize];
                for a in accs.iter().filter(|a| a.def) {
                    g.remove(a.name);
                    k.insert(a.name);
                }
                for a in accs.iter().filter(|a| !a.def) {
                    g.insert(a.name);
                }
            }
        }
        let mut live_in = gen.clone();
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                let mut out = NameSet::default();
                for &t in &self.succs[b] {
                    out.union(&live_in[t as usize]);
                }
                let mut v = gen[b];
                for k in 0..3 {
                    v.0[k] |= out.0[k] & !kill[b].0[k];
                }
                if v != live_in[b] {
                    live_in[b] = v;
                    changed = true;
                }
            }
        }
        live_in
    }
}

/// [`super::MachInst::read_groups`] of `inst` in terms of its accesses: an operand's access
/// is its index among the regalloc2 operands (the virtual registers that are not predicates,
/// in order); operands that are not regalloc2's are left out.
fn access_groups<I: super::MachInst>(inst: &I) -> Option<Vec<smallvec::SmallVec<[u8; 4]>>> {
    let groups = inst.read_groups()?;
    let mut acc_of: smallvec::SmallVec<[Option<u8>; 8]> = smallvec::SmallVec::new();
    let mut n = 0u8;
    inst.for_each_operand(&mut |r, _| match r {
        super::Reg::Virt(v) if v.kind != RegKind::Pred => {
            acc_of.push(Some(n));
            n += 1;
        }
        _ => acc_of.push(None),
    });
    let map = |g: smallvec::SmallVec<[u8; 4]>| {
        g.iter()
            .filter_map(|&op| acc_of.get(usize::from(op)).copied().flatten())
            .collect()
    };
    Some(groups.into_iter().map(map).collect())
}

/// For an ISA register move between two values of the same kind, whole: (def, use) operand
/// indices among the instruction's regalloc2 operands.
fn isa_copy<I: super::MachInst>(vc: &VCode<I>, i: usize, ops: &[ra::Operand]) -> Option<(u8, u8)> {
    let (super::Reg::Virt(d), super::Reg::Virt(s)) = vc.insts[i].is_move()? else {
        return None;
    };
    if d.kind != s.kind || d.kind == RegKind::Pred || !whole_fields(&vc.insts[i]) {
        return None;
    }
    copy_operands(ops, d, s)
}

/// Whether no field of `inst` reads only a half of its register.
fn whole_fields<I: super::MachInst>(inst: &I) -> bool {
    let mut whole = true;
    super::vcode::for_each_field(inst, |f| whole &= f.spec.half.is_none());
    whole
}

/// The indices of a copy's def of `d` and use of `s` among its regalloc2 operands.
fn copy_operands(ops: &[ra::Operand], d: super::VReg, s: super::VReg) -> Option<(u8, u8)> {
    let find = |v: super::VReg, kind| {
        ops.iter()
            .position(|o| o.vreg().vreg() == v.index as usize && o.kind() == kind)
            .and_then(|k| u8::try_from(k).ok())
    };
    Some((
        find(d, ra::OperandKind::Def)?,
        find(s, ra::OperandKind::Use)?,
    ))
}

/// For an ISA copy of one word of a pair or quad into a 32-bit value (a call's argument word
/// copied into the register the call pins): (def, use, word), the operand indices among the
/// instruction's regalloc2 operands and the word it copies.
fn isa_part_copy<I: super::MachInst>(
    vc: &VCode<I>,
    i: usize,
    ops: &[ra::Operand],
) -> Option<(u8, u8, u8)> {
    let inst = &vc.insts[i];
    let (super::Reg::Virt(d), super::Reg::Virt(s)) = inst.is_move()? else {
        return None;
    };
    if d.kind != RegKind::B32 || !matches!(s.kind, RegKind::B64 | RegKind::B128) {
        return None;
    }
    let word = inst.move_word();
    if !whole_fields(inst) || u32::from(word) >= s.kind.gprs() {
        return None;
    }
    let (def, use_) = copy_operands(ops, d, s)?;
    Some((def, use_, word))
}

/// No access (a word of [`Step::pack`] nothing is copied into).
const NO_ACC: u8 = u8::MAX;

/// For an instruction that copies 32-bit values into the words of a wider one: [`Step::pack`]
/// among the instruction's regalloc2 operands.
fn isa_pack<I: super::MachInst>(
    vc: &VCode<I>,
    i: usize,
    ops: &[ra::Operand],
) -> Option<(u8, [u8; 4])> {
    let words = vc.insts[i].pack_words();
    let mut def = None;
    let mut uses = [NO_ACC; 4];
    for (d, s, word) in words {
        let (da, ua) = copy_operands(ops, d, s)?;
        if *def.get_or_insert(da) != da || usize::from(word) >= uses.len() {
            return None;
        }
        uses[usize::from(word)] = ua;
    }
    Some((def?, uses))
}

fn find(parent: &mut [u32], x: u32) -> u32 {
    let mut r = x;
    while parent[r as usize] != r {
        r = parent[r as usize];
    }
    let mut x = x;
    while parent[x as usize] != r {
        let next = parent[x as usize];
        parent[x as usize] = r;
        x = next;
    }
    r
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (a, b) = (find(parent, a), find(parent, b));
    if a != b {
        parent[a.max(b) as usize] = a.min(b);
    }
}

/// Webs and their interference graph.
pub(super) struct Webs {
    /// Web of every access.
    pub of_acc: Vec<u32>,
    /// Name of every web.
    pub name: Vec<u16>,
    /// GPRs of every web (1, 2 or 4).
    pub width: Vec<u8>,
    /// Index of the first access of every web (layout order).
    first: Vec<u32>,
    /// Index of the last access of every web.
    last: Vec<u32>,
    /// Neighbours of every web (sorted, no duplicates).
    pub adj: Vec<Vec<u32>>,
    /// Copy partners of every web (same width).
    partners: Vec<Vec<u32>>,
    /// Per web, the other webs one instruction reads together with it, once per such
    /// instruction (register banks: see [`colour_spread`]).
    co_reads: Vec<Vec<u32>>,
    /// Per web, how many of regalloc2's spills store it: a spill is `STL [R1+x], R`, which
    /// reads R1's bank (1) besides the web's registers.
    spill_reads: Vec<u32>,
    /// Per web, the webs it meets only at a copy of one word between them (see
    /// [`NameProg::build`]'s `part`), with the offset `off` such that the two may share a
    /// register only where `base(this) == base(other) + off`.
    parts: Vec<Vec<(u32, i16)>>,
    /// Per web, whether its last access is a read by an instruction that reads its sources
    /// after issue (a store's data): the next value in its register waits for that read
    /// when written soon after ([`colour_spread`] keeps such registers for later).
    late_end: Vec<bool>,
    /// Per web, whether every access of it is a clobber (a call's): it holds no value, so
    /// its fixed register does not count among the registers the code needs.
    clobber_only: Vec<bool>,
}

impl Webs {
    /// Build the webs of `prog` and their interference graph (see the module essay).
    pub(super) fn build(prog: &NameProg) -> Webs {
        let live_in = prog.live_in();
        // 1. The values as union-find nodes, joined where one flows into another.
        let mut nodes = ValueNodes::build(prog, &live_in);
        // 2. Dense web numbers: of every access, of every name at a block end, at the entry.
        let numbers = WebNumbers::of(prog, &live_in, &mut nodes);
        let nw = numbers.name.len();
        // 3. Every web's width and last access.
        let (width, last) = widths_and_last(prog, &numbers);
        // 4. The interference graph and the copy partners.
        let (adj, partners, part_pairs) = interference(prog, &live_in, &numbers);
        let co_reads = co_reads(prog, &numbers.of_acc, nw);
        // 5. A part copy's ends that interfere elsewhere too keep their edge; the others may
        // share the copied word's register.
        let mut parts: Vec<Vec<(u32, i16)>> = vec![Vec::new(); nw];
        for (d, u, word) in part_pairs {
            if adj[d as usize].binary_search(&u).is_err() {
                parts[d as usize].push((u, i16::from(word)));
                parts[u as usize].push((d, -i16::from(word)));
            }
        }
        let mut spill_reads = vec![0u32; nw];
        for (s, step) in prog.steps.iter().enumerate() {
            if step.kind == StepKind::Spill {
                spill_reads[numbers.of_acc[step.start as usize] as usize] += 1;
            } else if prog.sp_reads[s] {
                // An instruction reading R1 beside its sources (the spill pass's `STL`).
                for a in step.start..step.end {
                    if !prog.accs[a as usize].def {
                        spill_reads[numbers.of_acc[a as usize] as usize] += 1;
                    }
                }
            }
        }
        let mut late_end = vec![false; nw];
        for (s, step) in prog.steps.iter().enumerate() {
            if prog.late_reads[s] {
                for a in step.start..step.end {
                    let w = numbers.of_acc[a as usize] as usize;
                    if !prog.accs[a as usize].def && last[w] == a {
                        late_end[w] = true;
                    }
                }
            }
        }
        let mut clobber_only = vec![true; nw];
        for (a, &w) in prog.accs.iter().zip(&numbers.of_acc) {
            if !a.clobber {
                clobber_only[w as usize] = false;
            }
        }
        Webs {
            of_acc: numbers.of_acc,
            name: numbers.name,
            width,
            first: numbers.first,
            last,
            adj,
            partners,
            co_reads,
            spill_reads,
            parts,
            late_end,
            clobber_only,
        }
    }
}

/// No node, no web.
const NONE: u32 = u32::MAX;

/// Step 1 of [`Webs::build`]: a union-find node per def access and per (block, live-in
/// name), joined where a value flows on (a live name across a block edge, a reuse def into
/// the use it reuses). Per (block, name) tables are indexed `block * NAMES + name`.
struct ValueNodes {
    /// Union-find parent of every node.
    parent: Vec<u32>,
    /// The name of every node.
    node_name: Vec<u16>,
    /// The node of a live-in name at a block's entry (`NONE`: not live in).
    entry: Vec<u32>,
    /// The node of every access.
    acc_node: Vec<u32>,
    /// The node a name holds at a block's end (`NONE`: none).
    end_node: Vec<u32>,
}

impl ValueNodes {
    /// A new node of `name`, its own root.
    fn new_node(&mut self, name: u16) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(id);
        self.node_name.push(name);
        id
    }

    /// Walk every block forward with the node each name holds (see [`ValueNodes`]).
    fn build(prog: &NameProg, live_in: &[NameSet]) -> ValueNodes {
        let nb = prog.blocks.len();
        let mut nodes = ValueNodes {
            parent: Vec::with_capacity(prog.accs.len()),
            node_name: Vec::with_capacity(prog.accs.len()),
            entry: vec![NONE; nb * NAMES],
            acc_node: vec![NONE; prog.accs.len()],
            end_node: vec![NONE; nb * NAMES],
        };
        for (b, live) in live_in.iter().enumerate() {
            for n in live.iter() {
                nodes.entry[b * NAMES + n as usize] = nodes.new_node(n);
            }
        }
        let mut cur = [NONE; NAMES];
        for b in 0..nb {
            cur.copy_from_slice(&nodes.entry[b * NAMES..(b + 1) * NAMES]);
            let (s, e) = prog.blocks[b];
            for step in &prog.steps[s as usize..e as usize] {
                nodes.step(prog, step, &mut cur);
            }
            nodes.end_node[b * NAMES..(b + 1) * NAMES].copy_from_slice(&cur);
            for &t in &prog.succs[b] {
                for n in live_in[t as usize].iter() {
                    let from = cur[n as usize];
                    if from != NONE {
                        let to = nodes.entry[t as usize * NAMES + n as usize];
                        union(&mut nodes.parent, from, to);
                    }
                }
            }
        }
        nodes
    }

    /// One step's accesses: its uses take the node their name holds (`cur`), its defs new
    /// nodes that the names then hold.
    fn step(&mut self, prog: &NameProg, step: &Step, cur: &mut [u32; NAMES]) {
        let range = step.start as usize..step.end as usize;
        for a in range.clone() {
            let acc = prog.accs[a];
            if !acc.def {
                let mut node = cur[acc.name as usize];
                if node == NONE {
                    // read before any write: its own web (the checker objects)
                    node = self.new_node(acc.name);
                }
                self.acc_node[a] = node;
            }
        }
        // clobbers first: a def into a clobbered register is the value that stays
        for clobbers_pass in [true, false] {
            for a in range.clone() {
                let acc = prog.accs[a];
                if !acc.def || acc.clobber != clobbers_pass {
                    continue;
                }
                let node = self.new_node(acc.name);
                if let Some(k) = acc.reuse {
                    let u = step.start as usize + k as usize;
                    if u < step.end as usize && self.acc_node[u] != NONE {
                        union(&mut self.parent, node, self.acc_node[u]);
                    }
                }
                self.acc_node[a] = node;
                cur[acc.name as usize] = node;
            }
        }
    }
}

/// Step 2 of [`Webs::build`]: a dense number for every union-find root, in the order of
/// first appearance (accesses in layout order, then block ends, then the entry).
struct WebNumbers {
    /// The web of every access.
    of_acc: Vec<u32>,
    /// The name of every web.
    name: Vec<u16>,
    /// The first access of every web (`u32::MAX` for one no access has).
    first: Vec<u32>,
    /// The web a name holds at a block's end (`NONE`: none), per `block * NAMES + name`.
    end_web: Vec<u32>,
    /// The webs live at the function's entry.
    entry_webs: Vec<u32>,
}

impl WebNumbers {
    /// Number the webs of `nodes`.
    fn of(prog: &NameProg, live_in: &[NameSet], nodes: &mut ValueNodes) -> WebNumbers {
        let nb = prog.blocks.len();
        let mut web_of_root = vec![NONE; nodes.parent.len()];
        let mut name = Vec::new();
        let mut first = Vec::new();
        let node_name = &nodes.node_name;
        let mut web = |parent: &mut Vec<u32>, node: u32, at: u32| {
            let r = find(parent, node) as usize;
            if web_of_root[r] == NONE {
                web_of_root[r] = name.len() as u32;
                name.push(node_name[r]);
                first.push(at);
            }
            web_of_root[r]
        };
        let parent = &mut nodes.parent;
        let of_acc: Vec<u32> = (0..prog.accs.len())
            .map(|a| web(parent, nodes.acc_node[a], a as u32))
            .collect();
        let mut end_web = vec![NONE; nb * NAMES];
        let mut entry_webs = Vec::new();
        for b in 0..nb {
            for n in 0..NAMES {
                let node = nodes.end_node[b * NAMES + n];
                if node != NONE {
                    end_web[b * NAMES + n] = web(parent, node, u32::MAX);
                }
            }
        }
        for n in live_in[0].iter() {
            entry_webs.push(web(parent, nodes.entry[n as usize], u32::MAX));
        }
        WebNumbers {
            of_acc,
            name,
            first,
            end_web,
            entry_webs,
        }
    }
}

/// Step 3 of [`Webs::build`]: every web's width (its accesses': one value; the class's for
/// a web none accesses) and its last access.
fn widths_and_last(prog: &NameProg, numbers: &WebNumbers) -> (Vec<u8>, Vec<u32>) {
    let nw = numbers.name.len();
    let mut last = vec![0u32; nw];
    let mut width: Vec<u8> = numbers
        .name
        .iter()
        .map(|n| prog.widths[*n as usize / PER_CLASS])
        .collect();
    let mut seen = vec![false; nw];
    for (a, &w) in numbers.of_acc.iter().enumerate() {
        last[w as usize] = a as u32;
        let w = w as usize;
        width[w] = if seen[w] {
            width[w].max(prog.acc_widths[a])
        } else {
            prog.acc_widths[a]
        };
        seen[w] = true;
    }
    (width, last)
}

/// Step 4 of [`Webs::build`]: walking each block backward with the live names, the
/// interference graph (sorted, no duplicates), every web's copy partners, and the part
/// copies `(def web, use web, word)` between different webs.
#[allow(clippy::type_complexity)] // the three results of one walk
fn interference(
    prog: &NameProg,
    live_in: &[NameSet],
    numbers: &WebNumbers,
) -> (Vec<Vec<u32>>, Vec<Vec<u32>>, Vec<(u32, u32, u8)>) {
    let nb = prog.blocks.len();
    let nw = numbers.name.len();
    let of_acc = &numbers.of_acc;
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); nw];
    let mut partners: Vec<Vec<u32>> = vec![Vec::new(); nw];
    let edge = |adj: &mut Vec<Vec<u32>>, a: u32, b: u32| {
        if a != b {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
    };
    let mut live_web = [NONE; NAMES];
    let mut part_pairs: Vec<(u32, u32, u8)> = Vec::new();
    for b in 0..nb {
        let mut live = NameSet::default();
        for &t in &prog.succs[b] {
            live.union(&live_in[t as usize]);
        }
        for n in live.iter() {
            live_web[n as usize] = numbers.end_web[b * NAMES + n as usize];
        }
        let (s, e) = prog.blocks[b];
        for step in prog.steps[s as usize..e as usize].iter().rev() {
            let base = step.start as usize;
            let accs = &prog.accs[base..step.end as usize];
            let w = |k: usize| of_acc[base + k];
            let copy_src = step.copy.map(|(d, u)| (d as usize, w(u as usize)));
            let part_src = step.part.map(|(d, u, _)| (d as usize, w(u as usize)));
            // a pack's def meets the values it copies only there (`parts` below)
            let packed = |k: usize, j: usize| {
                step.pack
                    .is_some_and(|(d, uses)| d as usize == k && uses.contains(&(j as u8)))
            };
            for (k, a) in accs.iter().enumerate().filter(|(_, a)| a.def) {
                let wd = w(k);
                let except = match (copy_src, part_src) {
                    (Some((d, src)), _) | (_, Some((d, src))) if d == k => src,
                    _ => NONE,
                };
                for n in live.iter() {
                    let wl = live_web[n as usize];
                    if wl != except {
                        edge(&mut adj, wd, wl);
                    }
                }
                for (j, o) in accs.iter().enumerate() {
                    // defs of one step are written together; an early def before the
                    // uses are read, a late use after the defs are written; and a def
                    // shares a register with a use only where both have the same width
                    // (an instruction of several pieces writes a pair's low word before
                    // its last piece reads its inputs: a scalar input in that register
                    // would be overwritten; exactly overlapping values are read and
                    // written word by word in step, as before)
                    if j != k
                        && w(j) != except
                        && !packed(k, j)
                        && (o.def
                            || a.early
                            || o.late
                            || prog.acc_widths[base + j] != prog.acc_widths[base + k])
                    {
                        edge(&mut adj, wd, w(j));
                    }
                }
            }
            if let Some((d, u, word)) = step.part {
                let (wd, wu) = (w(d as usize), w(u as usize));
                if wd != wu {
                    part_pairs.push((wd, wu, word));
                }
            }
            if let Some((d, uses)) = step.pack {
                let wd = w(d as usize);
                for (word, &u) in uses.iter().enumerate().filter(|(_, &u)| u != NO_ACC) {
                    let wu = w(u as usize);
                    if wu != wd {
                        part_pairs.push((wu, wd, word as u8));
                    }
                }
            }
            if let Some((d, u)) = step.copy {
                let (wd, wu) = (w(d as usize), w(u as usize));
                if wd != wu
                    && prog.acc_widths[base + d as usize] == prog.acc_widths[base + u as usize]
                {
                    partners[wd as usize].push(wu);
                    partners[wu as usize].push(wd);
                }
            }
            for a in accs.iter().filter(|a| a.def) {
                live.remove(a.name);
            }
            for (k, a) in accs.iter().enumerate().filter(|(_, a)| !a.def) {
                live.insert(a.name);
                live_web[a.name as usize] = w(k);
            }
        }
    }
    let entry_webs = &numbers.entry_webs;
    for (i, &a) in entry_webs.iter().enumerate() {
        for &b in &entry_webs[i + 1..] {
            edge(&mut adj, a, b);
        }
    }
    for l in adj.iter_mut() {
        l.sort_unstable();
        l.dedup();
    }
    (adj, partners, part_pairs)
}

/// Per web, the webs read by the same machine instruction as it (see [`Webs::co_reads`]):
/// only instructions count (regalloc2's moves, spills and reloads read one register), a web
/// read twice by one machine instruction is one read, and an instruction of several machine
/// instructions counts each with what it reads ([`NameProg::read_groups`]: the temporaries of
/// a three-`XMAD` multiply are read together with its factors, though for regalloc2 they are
/// only early defs).
fn co_reads(prog: &NameProg, of_acc: &[u32], nw: usize) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); nw];
    let mut read: Vec<u32> = Vec::new();
    let mut pairs = |read: &[u32]| {
        for &a in read {
            for &b in read {
                if a != b {
                    out[a as usize].push(b);
                }
            }
        }
    };
    for (s, step) in prog.steps.iter().enumerate() {
        if !matches!(step.kind, StepKind::Inst(_)) {
            continue;
        }
        match &prog.read_groups[s] {
            Some(groups) => {
                for g in groups {
                    read.clear();
                    for &k in g {
                        let a = step.start as usize + usize::from(k);
                        if a < step.end as usize && !read.contains(&of_acc[a]) {
                            read.push(of_acc[a]);
                        }
                    }
                    pairs(&read);
                }
            }
            None => {
                read.clear();
                for a in step.start..step.end {
                    let w = of_acc[a as usize];
                    if !prog.accs[a as usize].def && !read.contains(&w) {
                        read.push(w);
                    }
                }
                pairs(&read);
            }
        }
    }
    out
}
