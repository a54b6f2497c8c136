//! [`Sm50Inst`]: the SM50 machine instruction as register allocation sees it.
//!
//! In: built by the selector (`select`) and the chain builder ([`super::lea`]).
//! Out: after `machinst::allocate`, [`Sm50Inst::resolve`] gives plain [`sm50::Inst`]s.
//!
//! One `Sm50Inst` is a short *sequence* of SM50 instructions ("pieces") that share one operand
//! list. Most are a single piece. Several pieces are needed where SM50 computes one SSA value
//! in more than one instruction: a carry chain (`LEA.CC` + `LEA.HI.X`, `IADD.CC` + `IADD.X`)
//! whose carry flag must not be separated, a 64-bit value built from two 32-bit halves (a
//! register pair cannot be defined half by half in SSA), the three-`XMAD` multiply. Every def
//! of a multi-piece instruction is an *early* def, so the allocator never gives it a register
//! that a later piece still reads.
//!
//! A piece names registers only through [`RegRef`]s: operand number + offset in the operand's
//! register group (offset 1 of a pair is its high word, offsets 0..3 of a quad its words).
//! That lets a piece read one word of a pair or quad without a copy. Fields a `RegRef` does not
//! name keep the value the piece was built with (RZ, PT, immediates, constant-bank offsets).
//!
//! Invariants: every `RegRef::op` indexes `ops`; a branch piece's `target` indexes `targets`;
//! `role` is [`Role::Ret`] or [`Role::Branch`] exactly for terminators.

use std::fmt;

use smallvec::SmallVec;

use crate::machinst::{
    BlockId, MachInst, OpKind, OpSpec, PhysPred, PhysReg, Reg, RegKind, SlotAccess, SrcLoc,
    Terminator, VReg,
};
use crate::sm50::{self, Field, Form};

/// A register field of a piece: which operand, and which word of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegRef {
    pub field: Field,
    pub op: u8,
    pub offset: u8,
}

/// One SM50 instruction of a sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub inst: sm50::Inst,
    pub refs: SmallVec<[RegRef; 4]>,
    /// For a `BRA`: the index into [`Sm50Inst::targets`] it jumps to.
    pub target: Option<u8>,
    /// A relocation the cubin writer attaches to this instruction (a `.global` variable's
    /// address in a `MOV32I`).
    pub reloc: Option<Reloc>,
}

/// Which part of a module variable's address a `MOV32I` receives from the loader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub var: crate::ir::GlobalVar,
    pub word: RelocWord,
}

/// The part of an address a relocated `MOV32I` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelocWord {
    /// The low 32 bits of a 64-bit address (`R_CUDA_ABS32_LO_20`).
    Lo,
    /// The high 32 bits of a 64-bit address (`R_CUDA_ABS32_HI_20`).
    Hi,
    /// The whole address of a 32-bit module (`R_CUDA_ABS32_20`).
    Abs32,
    /// The offset of a `.shared` variable in the shared window (`R_CUDA_ABS24_20`; a
    /// function of a relocatable object, `LowerOptions::shared_relocs`).
    Shared,
    /// No relocation: the word stays 0 (the high word of a 64-bit `.shared` address; never
    /// attached to an instruction, `relocated_words`).
    Zero,
    /// The target of a `JCAL` to the system function `ir::Module::extern_funcs[n]`
    /// (`R_CUDA_ABS32_20` against its undefined symbol; `Reloc::var` is unused).
    Call(u32),
    /// The low / high word of the descriptor of kernel `ir::Module::kernel_descs[n]`
    /// (`R_CUDA_FUNC_DESC32_LO_32` / `HI_32` against the kernel's symbol; `Reloc::var` is
    /// unused).
    DescLo(u32),
    DescHi(u32),
    /// The driver's texture descriptor size (`R_CUDA_ABS32_20` against
    /// `.nv.unified.texrefDescSize`, [`crate::tex_table`]; `Reloc::var` is unused).
    TexDescSize,
    /// `.nv.surfrefDescSize` (`suq`'s table load, [`crate::tex_table::surf`]).
    SurfDescSize,
    /// `.nv.independent.samplerrefDescSize` (`txq` of a sampler attribute,
    /// [`crate::tex_table::samp`]).
    SampDescSize,
}

/// In the `rel` field of a `BRA` or `SSY` piece with no block target: the target is the
/// instruction `rel & !LOCAL_BRANCH` places after this one, within the same sequence
/// (`select::tex`'s per-quad handle split). `lower::emit` turns it into the target's index
/// like any other. (`rel` is 24 bits wide; sequences are far shorter than 2^23.)
pub const LOCAL_BRANCH: u64 = 1 << 23;

/// One register operand of the whole sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub reg: Reg,
    pub spec: OpSpec,
}

/// What the sequence is, for the allocator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Plain,
    /// A plain copy `ops[0] = ops[1]` (same kind): the allocator may drop it.
    Move,
    /// Ends the block; jumps to `targets` (in successor order).
    Branch,
    /// Ends the function (`EXIT`).
    Ret,
}

/// A machine instruction for `machinst`: pieces + operands (see the module essay).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sm50Inst {
    /// One piece inline (most instructions); longer sequences go to the heap, which keeps
    /// the instruction small (it is copied through every allocator pass).
    pub pieces: SmallVec<[Piece; 1]>,
    pub ops: SmallVec<[Operand; 4]>,
    pub role: Role,
    pub targets: SmallVec<[BlockId; 2]>,
    /// On a conditional branch: its condition is the same in every lane of a warp (see
    /// `reconverge`), so it needs no `SSY`/`SYNC`. `false` (the safe answer) everywhere else.
    pub uniform: bool,
    /// Built by `select::tex` and `select::surface` to gather a texture/surface instruction's
    /// coordinate pair or quad from 32-bit values (one `MOV` per word): only such an instruction is a
    /// [`MachInst::pack_words`] pack. Other all-`MOV` packs (64-bit values built from halves)
    /// keep their copies: placing their sources on the pair's words moved registers away from
    /// the bank-conflict and reuse-order choices and cost more cycles than the copies saved.
    pub tex_pack: bool,
    /// The PTX line of the IR instruction this was selected for (`VCodeBuilder` sets it).
    pub srcloc: SrcLoc,
    /// For `--explain`: what the instruction computes, when that is worth saying (the address
    /// expression of a `LEA` chain). Only filled when [`super::LowerOptions::explain`] is set.
    pub note: Option<Box<str>>,
}

impl Sm50Inst {
    /// Whether this is a site of `sqrt.rn.f32` that calls its slow path (`select::fdiv`).
    pub fn calls_sqrt_slow_path(&self) -> bool {
        self.calls_placeholder(super::select::CAL_FSQRT)
    }

    /// Whether a piece is a `CAL` whose target is still the placeholder `rel` (a slow path,
    /// `select::fdiv`, until `lower::emit` places it).
    fn calls_placeholder(&self, rel: u64) -> bool {
        self.pieces
            .iter()
            .any(|p| p.inst.form == Form::CAL && p.inst.get(Field::Rel) == Some(rel))
    }

    pub fn new(role: Role) -> Sm50Inst {
        Sm50Inst {
            pieces: SmallVec::new(),
            ops: SmallVec::new(),
            role,
            targets: SmallVec::new(),
            uniform: false,
            tex_pack: false,
            srcloc: SrcLoc::NONE,
            note: None,
        }
    }

    /// Add an operand; returns its number for [`RegRef`]s.
    pub fn op(&mut self, reg: Reg, spec: OpSpec) -> u8 {
        self.ops.push(Operand { reg, spec });
        (self.ops.len() - 1) as u8
    }

    /// A use of `v` (any kind, predicates included).
    pub fn use_(&mut self, v: VReg) -> u8 {
        self.op(Reg::Virt(v), OpSpec::use_())
    }

    /// A def of `v`: late for a single piece, early once a sequence has several (the caller
    /// says which with `early`).
    pub fn def(&mut self, v: VReg, early: bool) -> u8 {
        let spec = if early {
            OpSpec::early_def()
        } else {
            OpSpec::def()
        };
        self.op(Reg::Virt(v), spec)
    }

    /// Append a piece whose register fields are `refs` as `(field, op, offset)`.
    pub fn piece(&mut self, inst: sm50::Inst, refs: &[(Field, u8, u8)]) {
        // Pushed one by one: SmallVec's collect (its generic extend) cost more than these
        // one to four pushes.
        let mut r = SmallVec::new();
        for &(field, op, offset) in refs {
            r.push(RegRef { field, op, offset });
        }
        self.pieces.push(Piece {
            inst,
            refs: r,
            target: None,
            reloc: None,
        });
    }

    /// Append a `BRA` to `targets[target]`, guarded by `guard` = (operand, negated) if any.
    pub fn branch_piece(&mut self, target: u8, guard: Option<(u8, bool)>) {
        let mut inst = sm50::Inst::new(Form::BRA);
        let mut refs = SmallVec::new();
        if let Some((op, neg)) = guard {
            inst.set(Field::Pgn, neg as u64);
            refs.push(RegRef {
                field: Field::Pg,
                op,
                offset: 0,
            });
        }
        self.pieces.push(Piece {
            inst,
            refs,
            target: Some(target),
            reloc: None,
        });
    }

    /// The pieces with every register field filled in from physical operands. `Err` names an
    /// operand that is still virtual (a caller bug: resolve only after allocation).
    pub fn resolve(&self) -> Result<Vec<(sm50::Inst, Option<BlockId>)>, String> {
        let mut out = Vec::with_capacity(self.pieces.len());
        self.resolve_into(&mut out)?;
        Ok(out)
    }

    /// [`Self::resolve`], appending the pieces to `out` (the emitter gathers a block's
    /// instructions in one vector; a vector per instruction was a copy and an allocation
    /// each). On an error `out` may hold some of this instruction's pieces.
    pub fn resolve_into(&self, out: &mut Vec<(sm50::Inst, Option<BlockId>)>) -> Result<(), String> {
        for p in &self.pieces {
            let mut inst = p.inst;
            for r in &p.refs {
                let value = match self.ops[r.op as usize].reg {
                    Reg::Phys(PhysReg(255)) => 255,
                    Reg::Phys(PhysReg(n)) => u64::from(n) + u64::from(r.offset),
                    Reg::Pred(PhysPred(n)) => u64::from(n),
                    Reg::Virt(v) => return Err(format!("{v} was not allocated")),
                };
                inst.set(r.field, value);
            }
            out.push((inst, p.target.map(|t| self.targets[t as usize])));
        }
        Ok(())
    }

    /// Text of one piece; virtual registers are printed by name (`%d3`, `%d3.hi`, `%q1.2`).
    fn piece_text(&self, p: &Piece) -> String {
        // Give every virtual field a sentinel register (R200 + k) or predicate (P0 + k), print
        // with the real printer, then put the names back. Physical operands print as they are;
        // before allocation only RZ, R1 and PT are physical, so no sentinel can clash.
        let mut inst = p.inst;
        let mut names: Vec<(String, String)> = Vec::new();
        let (mut nr, mut np) = (0u64, 0u64);
        for r in &p.refs {
            let op = self.ops[r.op as usize];
            let value = match op.reg {
                Reg::Phys(PhysReg(255)) => 255,
                Reg::Phys(PhysReg(n)) => u64::from(n) + u64::from(r.offset),
                Reg::Pred(PhysPred(n)) => u64::from(n),
                Reg::Virt(v) => {
                    let name = match (v.kind, r.offset) {
                        (_, 0) => v.to_string(),
                        (RegKind::B64, 1) => format!("{v}.hi"),
                        (_, k) => format!("{v}.{k}"),
                    };
                    if v.kind == RegKind::Pred {
                        np += 1;
                        names.push((format!("P{}", np - 1), name));
                        np - 1
                    } else {
                        nr += 1;
                        names.push((format!("R{}", 199 + nr), name));
                        199 + nr
                    }
                }
            };
            inst.set(r.field, value);
        }
        let mut text = sm50::print(&inst, 0, 0);
        if let Some(t) = p.target {
            // The printer would show an address; show the block instead.
            let cut = text.find("BRA").map_or(text.len(), |i| i + 3);
            text.truncate(cut);
            text.push_str(&format!(" {}", self.targets[t as usize]));
        }
        substitute_tokens(&text, &names)
    }
}

/// Replace whole tokens (`R201`, `P0`) by names; a token is a maximal run of alphanumerics.
fn substitute_tokens(text: &str, names: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match names.iter().find(|(k, _)| k == word) {
            Some((_, n)) => out.push_str(n),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

impl fmt::Display for Sm50Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, p) in self.pieces.iter().enumerate() {
            if k > 0 {
                // Continuation lines of one pseudo-instruction are marked with `+`.
                f.write_str("\n    + ")?;
            }
            f.write_str(&self.piece_text(p))?;
        }
        Ok(())
    }
}

fn mem_size(kind: RegKind) -> u64 {
    match kind {
        RegKind::B64 => 5,
        RegKind::B128 => 6,
        _ => 4,
    }
}

/// `STL [R1 + offset], src` of a value of `kind` (a spill store, `src` physical or virtual).
fn spill_inst(offset: u32, src: Reg, kind: RegKind) -> Sm50Inst {
    local_access(Form::STL, src, OpSpec::use_(), offset, kind)
}

/// `LDL dst, [R1 + offset]` of a value of `kind` (a reload, `dst` physical or virtual).
fn reload_inst(dst: Reg, offset: u32, kind: RegKind) -> Sm50Inst {
    local_access(Form::LDL, dst, OpSpec::def(), offset, kind)
}

/// `form` (STL or LDL) of `reg` (its `Rd` field, read or written as `spec` says) at
/// `[R1 + offset]`, `kind` wide.
fn local_access(form: Form, reg: Reg, spec: OpSpec, offset: u32, kind: RegKind) -> Sm50Inst {
    let mut i = Sm50Inst::new(Role::Plain);
    let r = i.op(reg, spec);
    let sp = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
    let inst = sm50::Inst::new(form)
        .with(Field::Size, mem_size(kind))
        .with_signed(Field::Off, i64::from(offset));
    i.piece(inst, &[(Field::Rd, r, 0), (Field::Ra, sp, 0)]);
    i
}

impl MachInst for Sm50Inst {
    fn visit_operands(&mut self, f: &mut dyn FnMut(&mut Reg, OpSpec)) {
        for op in &mut self.ops {
            f(&mut op.reg, op.spec);
        }
    }

    fn for_each_operand(&self, f: &mut dyn FnMut(Reg, OpSpec)) {
        for op in &self.ops {
            f(op.reg, op.spec);
        }
    }

    fn terminator(&self) -> Terminator {
        match self.role {
            Role::Ret => Terminator::Ret,
            Role::Branch => Terminator::Branch,
            _ => Terminator::None,
        }
    }

    fn is_move(&self) -> Option<(Reg, Reg)> {
        (self.role == Role::Move).then(|| (self.ops[0].reg, self.ops[1].reg))
    }

    fn read_groups(&self) -> Option<Vec<SmallVec<[u8; 4]>>> {
        if self.pieces.len() < 2 {
            return None;
        }
        // the register fields (predicates have no banks)
        let gpr = |r: &&RegRef| match self.ops[usize::from(r.op)].reg {
            Reg::Virt(v) => v.kind != RegKind::Pred,
            Reg::Phys(_) => true,
            Reg::Pred(_) => false,
        };
        let groups = self
            .pieces
            .iter()
            .map(|p| {
                let refs: SmallVec<[RegRef; 4]> = p.refs.iter().filter(gpr).copied().collect();
                let mut g: SmallVec<[u8; 4]> = SmallVec::new();
                for r in &refs {
                    let is_use = self.ops[usize::from(r.op)].spec.kind == OpKind::Use;
                    if !g.contains(&r.op) && (is_use || piece_reads(&p.inst, &refs, r.field)) {
                        g.push(r.op);
                    }
                }
                g
            })
            .collect();
        Some(groups)
    }

    fn reads_late(&self) -> bool {
        // The scheduler's rule for a read scoreboard (`sm50::sched`): variable latency, not
        // a load or texture fetch (those read their address registers at issue).
        self.pieces.iter().any(|p| {
            let info = p.inst.info();
            info.variable_latency
                && !matches!(
                    info.props.access,
                    sm50::MemAccess::Load | sm50::MemAccess::Query
                )
        })
    }

    fn move_word(&self) -> u8 {
        // the source word the first MOV reads (a whole copy's pieces read words 0, 1, ..)
        self.pieces
            .first()
            .and_then(|p| p.refs.iter().find(|r| r.op == 1))
            .map_or(0, |r| r.offset)
    }

    fn pack_words(&self) -> SmallVec<[(VReg, VReg, u8); 4]> {
        let mut words = SmallVec::new();
        if !self.tex_pack || self.role != Role::Plain || !self.pieces.iter().all(is_pack_piece) {
            return words;
        }
        for p in &self.pieces {
            let [d, s] = p.refs[..] else { continue };
            let (Reg::Virt(dv), Reg::Virt(sv)) =
                (self.ops[d.op as usize].reg, self.ops[s.op as usize].reg)
            else {
                continue;
            };
            let (dspec, sspec) = (self.ops[d.op as usize].spec, self.ops[s.op as usize].spec);
            if matches!(dv.kind, RegKind::B64 | RegKind::B128)
                && sv.kind == RegKind::B32
                && dspec.kind == OpKind::Def
                && sspec.kind == OpKind::Use
                && dspec.half.is_none()
                && sspec.half.is_none()
                && s.offset == 0
            {
                words.push((dv, sv, d.offset));
            }
        }
        words
    }

    fn drop_identity_copies(&mut self) -> bool {
        if !self.tex_pack || self.role != Role::Plain || !self.pieces.iter().all(is_pack_piece) {
            return false;
        }
        let ops = &self.ops;
        let at = |r: &RegRef| match ops[r.op as usize].reg {
            Reg::Phys(PhysReg(n)) if n != 255 => Some(u32::from(n) + u32::from(r.offset)),
            _ => None,
        };
        self.pieces.retain(|p| match p.refs[..] {
            [d, s] => at(&d).is_none() || at(&d) != at(&s),
            _ => true,
        });
        self.pieces.is_empty()
    }

    fn gen_move(dst: PhysReg, src: PhysReg, kind: RegKind) -> Self {
        let mut i = Sm50Inst::new(Role::Move);
        let words = kind.gprs().max(1) as u8;
        let d = i.op(Reg::Phys(dst), OpSpec::def());
        let s = i.op(Reg::Phys(src), OpSpec::use_());
        for k in 0..words {
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, d, k), (Field::Rb, s, k)],
            );
        }
        i
    }

    fn gen_spill(offset: u32, src: PhysReg, kind: RegKind) -> Self {
        spill_inst(offset, Reg::Phys(src), kind)
    }

    fn gen_reload(dst: PhysReg, offset: u32, kind: RegKind) -> Self {
        reload_inst(Reg::Phys(dst), offset, kind)
    }

    fn as_slot_access(&self) -> Option<SlotAccess> {
        let [p] = self.pieces.as_slice() else {
            return None;
        };
        let store = match p.inst.form {
            Form::STL => true,
            Form::LDL => false,
            _ => return None,
        };
        let kind = match p.inst.get(Field::Size)? {
            4 => RegKind::B32,
            5 => RegKind::B64,
            6 => RegKind::B128,
            _ => return None,
        };
        // The field holds 24 signed bits: a negative offset (a kernel's own `[R1 - 8]`, read
        // back as 0xfffff8) is never a spill slot, and would not fit `spill_inst` again.
        let offset = u32::try_from(p.inst.get(Field::Off)?)
            .ok()
            .filter(|o| *o < 1 << 23)?;
        let Reg::Phys(reg) = self.ops.first()?.reg else {
            return None;
        };
        // Exactly the spill code's instruction (guard, cache mode, base R1 and operand roles
        // included), whatever PTX line it was placed at.
        let same = if store {
            spill_inst(offset, Reg::Phys(reg), kind)
        } else {
            reload_inst(Reg::Phys(reg), offset, kind)
        };
        (same.pieces == self.pieces && same.ops == self.ops && same.role == self.role).then_some(
            SlotAccess {
                offset,
                reg,
                kind,
                store,
            },
        )
    }

    fn gen_spill_virt(offset: u32, src: VReg) -> Option<Self> {
        Some(spill_inst(offset, Reg::Virt(src), src.kind))
    }

    fn gen_reload_virt(dst: VReg, offset: u32) -> Option<Self> {
        Some(reload_inst(Reg::Virt(dst), offset, dst.kind))
    }

    /// `MOV32I` of a constant (not one the loader patches), `MOV` from the constant bank, and
    /// `S2R` of a special register fixed for the thread's lifetime (its lane, thread and block
    /// indices, lane masks): one def, every piece one of those.
    fn rematerialisable(&self) -> bool {
        let fixed_sr = |sr: u64| matches!(sr, 0x00 | 0x21..=0x27 | 0x38..=0x3c);
        self.role == Role::Plain
            && self.ops.len() == 1
            && self.ops[0].spec.kind == OpKind::Def
            && matches!(self.ops[0].reg, Reg::Virt(v) if v.kind != RegKind::Pred)
            && !self.pieces.is_empty()
            && self.pieces.iter().all(|p| {
                p.reloc.is_none()
                    && match p.inst.form {
                        Form::MOV32I | Form::MOV_C => true,
                        Form::S2R => p.inst.get(Field::Sr).is_some_and(fixed_sr),
                        _ => false,
                    }
            })
    }

    fn gen_jump(target: BlockId) -> Self {
        let mut i = Sm50Inst::new(Role::Branch);
        i.targets.push(target);
        i.branch_piece(0, None);
        i
    }

    fn gen_pred_to_gpr(dst: VReg, src: VReg) -> Self {
        // SEL dst, RZ, 0x1, !src  ==  src ? 1 : 0
        let mut i = Sm50Inst::new(Role::Plain);
        let d = i.def(dst, false);
        let s = i.use_(src);
        let inst = sm50::Inst::new(Form::SEL_I)
            .with(Field::ImmImm20s, 1)
            .with(Field::Psn, 1);
        i.piece(inst, &[(Field::Rd, d, 0), (Field::Ps, s, 0)]);
        i
    }

    fn gen_gpr_to_pred(dst: VReg, src: VReg) -> Self {
        // ISETP.NE.U32.AND dst, PT, src, RZ, PT
        let mut i = Sm50Inst::new(Role::Plain);
        let d = i.def(dst, false);
        let s = i.use_(src);
        let inst = sm50::Inst::new(Form::ISETP_R).with(Field::Cmp, sm50::values::isetp::cmp::NE);
        i.piece(inst, &[(Field::Pd0, d, 0), (Field::Ra, s, 0)]);
        i
    }

    fn branch_targets(&self) -> &[BlockId] {
        if self.role == Role::Branch {
            &self.targets
        } else {
            &[]
        }
    }

    fn set_branch_target(&mut self, succ_index: usize, target: BlockId) {
        if self.role == Role::Branch {
            if let Some(t) = self.targets.get_mut(succ_index) {
                *t = target;
            }
        }
    }

    fn srcloc(&self) -> SrcLoc {
        self.srcloc
    }

    fn set_srcloc(&mut self, loc: SrcLoc) {
        self.srcloc = loc;
    }

    /// A `CAL` of a slow path of the f32 or f64 division, reciprocal or square root clobbers
    /// its scratch registers and predicates (`select::fdiv`); a call by the ABI (`JCAL`, or
    /// `CAL` of a subroutine) its caller-saved registers (`select::call`); nothing else
    /// clobbers anything.
    fn clobbers(&self) -> (&'static [PhysReg], &'static [PhysPred]) {
        // Most instructions call nothing: one scan of the pieces decides that.
        if !self
            .pieces
            .iter()
            .any(|p| matches!(p.inst.form, Form::JCAL | Form::CAL))
        {
            return (&[], &[]);
        }
        use super::abi;
        use super::select::{CAL_DDIV, CAL_DRCP, CAL_DSQRT, CAL_FDIV, CAL_FRCP, CAL_FSQRT};
        let slow_paths = [
            (CAL_FDIV, abi::CALL_CLOBBERS),
            (CAL_FRCP, abi::RCP_CALL_CLOBBERS),
            (CAL_DDIV, abi::DDIV_CALL_CLOBBERS),
            (CAL_DRCP, abi::DRCP_CALL_CLOBBERS),
            (CAL_DSQRT, abi::DSQRT_CALL_CLOBBERS),
            (CAL_FSQRT, abi::FSQRT_CALL_CLOBBERS),
        ];
        if let Some(&(_, clobbers)) = slow_paths
            .iter()
            .find(|(rel, _)| self.calls_placeholder(*rel))
        {
            clobbers
        } else {
            // A system call (`JCAL`) or a call of one of the module's subroutines (`CAL`).
            // One 32-bit def per result word (`select::call`).
            let results = self
                .ops
                .iter()
                .filter(|o| o.spec.kind == crate::machinst::OpKind::Def)
                .count();
            let outlined = self.pieces.iter().any(|p| {
                p.inst.form == Form::CAL
                    && p.inst.get(Field::Rel).is_some_and(|r| {
                        r >= super::SUB_CAL_BASE
                            && (r - super::SUB_CAL_BASE) & super::OUTLINED_CAL != 0
                    })
            });
            if outlined {
                abi::outlined_call_clobbers(results)
            } else {
                abi::extern_call_clobbers(results)
            }
        }
    }
}

/// Whether register field `field` of `inst` is a source (not a destination): the piece with
/// its operand fields cleared to `RZ` and `field` set to a marker register, whose operands
/// are then visited (the ISA tables know which fields are read).
fn piece_reads(inst: &sm50::Inst, refs: &[RegRef], field: Field) -> bool {
    const MARK: u64 = 128;
    let mut x = *inst;
    for r in refs {
        x.set(r.field, 255);
    }
    x.set(field, MARK);
    let mut read = false;
    x.operands(|o| {
        if let sm50::Operand::Reg {
            reg, def: false, ..
        } = o
        {
            read |= u64::from(reg) == MARK;
        }
    });
    read
}

/// Whether `p` is one word of a [`MachInst::pack_words`] instruction: a plain `MOV Rd, Rb`
/// (no guard, all lanes) whose `Rd` is an operand and whose `Rb` is one or RZ.
fn is_pack_piece(p: &Piece) -> bool {
    let neutral = |mut i: sm50::Inst| {
        i.set(Field::Rd, 255);
        i.set(Field::Rb, 255);
        i
    };
    let fields_ok = match p.refs[..] {
        [d] => d.field == Field::Rd,
        [d, s] => d.field == Field::Rd && s.field == Field::Rb,
        _ => false,
    };
    fields_ok
        && p.target.is_none()
        && p.reloc.is_none()
        && p.inst.form == Form::MOV_R
        && neutral(p.inst) == sm50::Inst::new(Form::MOV_R)
}
