//! Rematerialization before register allocation: where more 32-bit values are live at once
//! than regalloc2 has names for, a cheap value read in another block than its definition's is
//! computed again there instead of being kept live across the blocks between.
//!
//! In: the [`VCode`] selection (and load hoisting) produced: virtual registers, SSA. Out: the
//! same code where, in each block, the first read of such a value is preceded by a copy of its
//! defining instruction into a fresh vreg, and every read of the value in that block reads the
//! copy; nothing else changes (blocks, parameters, successors and their arguments stay: a value
//! passed as a block argument stays live to that branch), and a cheap definition nothing reads
//! any more is removed.
//!
//! **Cheap** ([`remat_def`]): one unpredicated fixed-latency ALU instruction from a short list
//! of classes (`MOV`, `MOV32I`, `IADD`, `IADD32I`, `ISCADD`, `LEA`, `SHL`, `SHR`, `LOP`,
//! `LOP32I`) with one 32-bit def and at most one virtual register read, no carry flag, no
//! predicate, no relocation, no clobbers. A copy in block `b` reads the same register as the
//! original: the original's definition dominates every read of its value, so that register's
//! definition dominates `b` too (SSA); when that register is itself cheap and defined in
//! another block, the copy reads its copy in `b` (made first).
//!
//! **When**: only where the function's scalar pressure (most 32-bit values live at one point,
//! `machinst::scalar_pressure`) exceeds [`REMAT_PRESSURE`], the names regalloc2 has for scalars
//! in all three of its classes together. There the allocation must spill; a copy costs one ALU
//! instruction where a spilled value costs a store and a load from local memory per read.
//!
//! The copies are kept only where they bring the pressure down to the names (no spill is then
//! forced); where it stays above, the allocation spills anyway and the copies would only add
//! instructions, so the code is returned unchanged.
//!
//! **Trade-off**: a copy in a loop body runs every iteration, and the register it reads stays
//! live to the copy (one register for the many values computed from a common base, none for
//! a constant). cub's radix-sort downsweep (corpus-nvcc, `radixSortThrust`) keeps 40 guards
//! `offset + 32 k` from the loads of its keys to the loads of its values, thousands of
//! instructions later, beside some 230 other scalars; value numbering (`ir::simplify`) made
//! them one value each. Recomputed, its pressure falls from 273 to 206 scalars, still above
//! the 192 names (keys, counter addresses, counters and shared-memory loads of 39 items each
//! are live at once in its ranking; ptxas 11.8 holds them in 255 registers), so it stays as it
//! was: what it needs is more names for scalars than regalloc2's classes give.

use rustc_hash::FxHashMap as HashMap;

use super::inst::{Role, Sm50Inst};
use crate::machinst::{scalar_pressure, MachInst, OpConstraint, OpKind, Reg, RegKind, VCode};
use crate::machinst::{BlockData, OpPos, VReg};
use crate::sm50::sched::model::{access, CC};

/// Scalars live at once above which cheap values are recomputed: regalloc2's three classes
/// of 64 names each (`machinst::alloc`).
pub const REMAT_PRESSURE: usize = 3 * 64;

/// Classes whose instructions are cheap enough to compute twice (see the module essay).
const CHEAP: &[&str] = &[
    "MOV", "MOV32I", "IADD", "IADD32I", "ISCADD", "LEA", "SHL", "SHR", "LOP", "LOP32I",
];

/// The vreg `inst` defines if it is cheap (see the module essay).
fn remat_def(inst: &Sm50Inst) -> Option<VReg> {
    if !matches!(inst.role, Role::Plain)
        || inst.pieces.len() != 1
        || !inst.targets.is_empty()
        || inst.pieces[0].reloc.is_some()
    {
        return None;
    }
    let (regs, preds) = inst.clobbers();
    if !regs.is_empty() || !preds.is_empty() {
        return None;
    }
    let p = &inst.pieces[0].inst;
    let info = p.info();
    if info.variable_latency || !CHEAP.contains(&info.class) {
        return None;
    }
    let a = access(p);
    if a.uses.contains(&CC) || a.defs.contains(&CC) {
        return None;
    }
    let mut def = None;
    let mut virt_uses = 0;
    for op in &inst.ops {
        match (op.reg, op.spec.kind) {
            (Reg::Virt(v), OpKind::Def) => {
                let plain = v.kind == RegKind::B32
                    && op.spec.constraint == OpConstraint::Reg
                    && op.spec.pos == OpPos::Late;
                if !plain || def.is_some() {
                    return None;
                }
                def = Some(v);
            }
            (Reg::Virt(v), OpKind::Use) => {
                if v.kind != RegKind::B32
                    || op.spec.constraint != OpConstraint::Reg
                    || op.spec.half.is_some()
                {
                    return None;
                }
                virt_uses += 1;
            }
            (Reg::Phys(_), OpKind::Use) => {}
            _ => return None,
        }
    }
    (virt_uses <= 1).then_some(def).flatten()
}

/// Per block, what the rewrite has made there: each recomputed value's copy.
struct Rewrite<'a> {
    /// Per vreg: the block of its cheap definition and that instruction.
    cheap: &'a [Option<(usize, Sm50Inst)>],
    vregs: &'a mut Vec<RegKind>,
    /// The copies made in the current block (original vreg → copy).
    local: HashMap<u32, VReg>,
}

impl Rewrite<'_> {
    /// Point every read in `inst` of a value defined cheaply in another block than `b` at its
    /// copy in `b`, pushing to `out` the copies this makes first (before `inst`).
    fn reads(&mut self, b: usize, inst: &mut Sm50Inst, out: &mut Vec<Sm50Inst>) {
        for k in 0..inst.ops.len() {
            let op = inst.ops[k];
            let Reg::Virt(v) = op.reg else { continue };
            if op.spec.kind != OpKind::Use || v.kind != RegKind::B32 {
                continue;
            }
            match &self.cheap[v.index as usize] {
                Some((db, _)) if *db != b => {}
                _ => continue,
            }
            let copy = self.copy(b, v, out);
            inst.ops[k].reg = Reg::Virt(copy);
        }
    }

    /// The copy of `v` in block `b`, made (and pushed to `out`) if there is none yet.
    fn copy(&mut self, b: usize, v: VReg, out: &mut Vec<Sm50Inst>) -> VReg {
        if let Some(c) = self.local.get(&v.index) {
            return *c;
        }
        let Some((_, def)) = &self.cheap[v.index as usize] else {
            return v;
        };
        let mut inst = def.clone();
        let fresh = VReg {
            index: self.vregs.len() as u32,
            kind: RegKind::B32,
        };
        self.vregs.push(RegKind::B32);
        for op in inst.ops.iter_mut() {
            if op.spec.kind == OpKind::Def {
                op.reg = Reg::Virt(fresh);
            }
        }
        // its own read may be a cheap value of another block: read that one's copy
        self.reads(b, &mut inst, out);
        out.push(inst);
        self.local.insert(v.index, fresh);
        fresh
    }
}

/// Recompute cheap values where they are read (see the module essay); `vcode` unchanged when
/// its scalar pressure is at most [`REMAT_PRESSURE`], or still above it after recomputing.
pub(super) fn rematerialize(vcode: VCode<Sm50Inst>) -> Result<VCode<Sm50Inst>, String> {
    // (fewer 32-bit vregs than that cannot be live at once more: skip the liveness)
    let scalars = vcode
        .vreg_kinds()
        .iter()
        .filter(|k| **k == RegKind::B32)
        .count();
    if scalars <= REMAT_PRESSURE || scalar_pressure(&vcode) <= REMAT_PRESSURE {
        return Ok(vcode);
    }
    let original = vcode.clone();
    let (mut blocks, mut vregs) = vcode.into_blocks();
    let mut cheap: Vec<Option<(usize, Sm50Inst)>> = vec![None; vregs.len()];
    for (b, blk) in blocks.iter().enumerate() {
        for inst in &blk.insts {
            if let Some(v) = remat_def(inst) {
                cheap[v.index as usize] = Some((b, inst.clone()));
            }
        }
    }
    let mut rw = Rewrite {
        cheap: &cheap,
        vregs: &mut vregs,
        local: HashMap::default(),
    };
    for (b, blk) in blocks.iter_mut().enumerate() {
        rw.local.clear();
        let old = std::mem::take(&mut blk.insts);
        let mut out = Vec::with_capacity(old.len());
        for mut inst in old {
            rw.reads(b, &mut inst, &mut out);
            out.push(inst);
        }
        blk.insts = out;
    }
    drop_unread(&mut blocks, &cheap, vregs.len());
    let recomputed = VCode::from_blocks(blocks, vregs)?;
    // Still more than the names: the allocation spills anyway, and the copies would only add
    // instructions (measured on cub's radix sort, 273 -> 206 scalars: 2.8 -> 2.2 KB of spill
    // slots but 0.7% more static cycles over corpus-nvcc).
    if scalar_pressure(&recomputed) > REMAT_PRESSURE {
        return Ok(original);
    }
    Ok(recomputed)
}

/// Remove the cheap definitions whose value nothing reads any more (every read went to a
/// copy): left in place they would cost an instruction and a register each.
fn drop_unread(
    blocks: &mut [BlockData<Sm50Inst>],
    cheap: &[Option<(usize, Sm50Inst)>],
    num_vregs: usize,
) {
    let mut read = vec![false; num_vregs];
    for blk in blocks.iter() {
        for inst in &blk.insts {
            for op in &inst.ops {
                if let (Reg::Virt(v), OpKind::Use) = (op.reg, op.spec.kind) {
                    read[v.index as usize] = true;
                }
            }
        }
        for (_, args) in &blk.succs {
            for a in args {
                read[a.index as usize] = true;
            }
        }
    }
    for blk in blocks.iter_mut() {
        blk.insts.retain(|inst| match remat_def(inst) {
            Some(v) => {
                read[v.index as usize] || !matches!(cheap.get(v.index as usize), Some(Some(_)))
            }
            None => true,
        });
    }
}
