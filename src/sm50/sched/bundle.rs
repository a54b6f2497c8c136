//! Kernel layout: prologue, bundles, branch offsets, the `EXIT; BRA self` tail, NOP padding.
//!
//! In: a [`Body`] (a kernel's instructions in layout order with the index each branch goes to).
//! Out: [`Laid`]: the `.text` words (control words included) exactly in ptxas's shape
//! (sm50-isa.md §1.1, §3.6–3.7):
//!
//! ```text
//! MOV R1, c[0x0][0x20]      prologue (stack pointer), slot 0, stall 6
//! ...body...
//! EXIT                      appended unless the body already ends in an unconditional
//!                           EXIT, BRA or RET (a subroutine after the kernel's code)
//! BRA self                  ptxas ends every kernel so
//! NOP ...                   padding (control field 0x7e0) to a multiple of 64 bytes
//! ```
//!
//! Instructions go three to a 32-byte bundle after its control word; instruction `n` of the
//! laid-out sequence sits at byte `32·(n/3) + 8 + 8·(n%3)`. A branch at `addr` to `target`
//! encodes `rel = target − (addr + 8)`; like ptxas, a target in slot 0 is encoded as its
//! bundle's base (the control word's address), which the hardware resolves to the same
//! instruction, except for `BRA self`, which always names itself.

pub use super::model::inst_addr;
use super::model::{access_into, leaders, Access};
use super::{assign_control_with, list, Mode};
use crate::sm50::{self, Bundle, Ctrl, Field, Form, Inst};

/// A kernel body before layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Body {
    pub insts: Vec<Inst>,
    /// `targets[i]`: for a branch (`BRA`, `SSY`, `PBK`, `CAL`), the index in `insts` of the
    /// instruction it goes to; `None` otherwise. May be shorter than `insts`.
    pub targets: Vec<Option<usize>>,
}

/// One laid-out instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Byte offset in `.text`.
    pub addr: u64,
    pub inst: Inst,
    pub ctrl: Ctrl,
}

/// A laid-out kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Laid {
    /// `.text` as little-endian 64-bit words, a multiple of 8 words (64 bytes).
    pub code: Vec<u64>,
    /// Every instruction (padding NOPs included) with its address and control field.
    pub placed: Vec<Placed>,
    /// Branch targets as indices into `placed` (for [`super::check::check_hazards`]).
    pub targets: Vec<Option<usize>>,
    /// Byte offsets of the `EXIT` instructions (EIATTR_EXIT_INSTR_OFFSETS).
    pub exit_offsets: Vec<u32>,
    /// Byte offsets of `S2R SR_CTAID.*` (EIATTR_S2RCTAID_INSTR_OFFSETS).
    pub s2r_ctaid_offsets: Vec<u32>,
    /// Byte offsets of the `SHFL`s between a `SAM` and its `RAM` (the quad emulation of
    /// `lower::select::tex::quad`): ptxas 11.8 lists them as
    /// EIATTR_INT_WARP_WIDE_INSTR_OFFSETS (warp-wide instructions it wrote itself).
    pub warp_wide_offsets: Vec<u32>,
    /// `moved[i]`: where instruction `i` of the unscheduled sequence (prologue at 0, body
    /// index `b` at `b + 1`, then the tail) ended up in `placed` after list scheduling.
    pub moved: Vec<usize>,
}

/// Why a body cannot be laid out (compiler bugs upstream, reported instead of panicking).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("branch at body index {at} goes to index {target}, past the end ({len} instructions)")]
    BadTarget {
        at: usize,
        target: usize,
        len: usize,
    },
    #[error("instruction at body index {0} has a branch target but no branch offset field")]
    NotABranch(usize),
    #[error("branch at body index {0} has no target")]
    MissingTarget(usize),
    #[error("branch offset from {from:#x} to {to:#x} does not fit 24 bits")]
    OutOfRange { from: u64, to: u64 },
    #[error("instruction {0:?} at body index {1} is not valid (cross-field check fails)")]
    Invalid(Form, usize),
}

/// The prologue `MOV R1, c[0x0][0x20]` (= `0x4c98078000870001`).
pub fn prologue() -> Inst {
    Inst::new(Form::MOV_C)
        .with(Field::Rd, 1)
        .with(Field::Cbk, 0)
        .with(Field::Cbo, 0x20 / 4)
}

/// `EXIT` (= `0xe30000000007000f`).
pub fn exit() -> Inst {
    Inst::new(Form::EXIT)
}

/// `BRA` with a zero offset (set by layout).
pub fn bra() -> Inst {
    Inst::new(Form::BRA)
}

/// The canonical `NOP` (= `0x50b0000000070f00`).
pub fn nop() -> Inst {
    Inst::new(Form::NOP)
}

fn is_unconditional(inst: &Inst) -> bool {
    inst.get(Field::Pg) == Some(7) && inst.get(Field::Pgn) == Some(0)
}

/// Lay out a kernel: prologue, body, tail, control codes, branch offsets, padding.
pub fn layout(body: &Body, mode: Mode) -> Result<Laid, LayoutError> {
    layout_with(body, mode, true)
}

/// Lay out a device function of a relocatable object (a `.visible .func` under `-c`): as
/// [`layout`], without the `MOV R1, c[0x0][0x20]` prologue (the caller owns the stack
/// pointer; ptxas 11.8's `_Z11offset_maini` is `IADD32I R4, R4, 0x7 ; RET ; BRA self`), so
/// body index `b` is sequence index `b` (`Laid::moved`).
pub fn layout_function(body: &Body, mode: Mode) -> Result<Laid, LayoutError> {
    layout_with(body, mode, false)
}

fn layout_with(body: &Body, mode: Mode, prologue_first: bool) -> Result<Laid, LayoutError> {
    let len = body.insts.len();
    for (i, inst) in body.insts.iter().enumerate() {
        if !inst.is_valid() {
            return Err(LayoutError::Invalid(inst.form, i));
        }
        let target = body.targets.get(i).copied().flatten();
        let has_rel = inst.get(Field::Rel).is_some() && inst.form != Form::BRX;
        match target {
            Some(t) if t >= len => {
                return Err(LayoutError::BadTarget {
                    at: i,
                    target: t,
                    len,
                });
            }
            Some(_) if !has_rel => return Err(LayoutError::NotABranch(i)),
            None if has_rel => return Err(LayoutError::MissingTarget(i)),
            _ => {}
        }
    }
    // The full sequence: prologue at 0, the body shifted by one, then the tail; at most
    // `len + 3` instructions, padded to a multiple of 6 at the end. Room for the padding is
    // made now: pushing it onto a full vector copied the whole vector again.
    let cap = (len + 3).next_multiple_of(6);
    let mut insts = Vec::with_capacity(cap);
    let mut targets = Vec::with_capacity(cap);
    let first = usize::from(prologue_first);
    if prologue_first {
        insts.push(prologue());
        targets.push(None);
    }
    // (The instructions in one piece: pushing them one by one copied each separately.)
    insts.extend_from_slice(&body.insts);
    for i in 0..body.insts.len() {
        targets.push(body.targets.get(i).copied().flatten().map(|t| t + first));
    }
    let ends_cleanly = body.insts.last().is_some_and(|last| {
        matches!(last.form, Form::EXIT | Form::BRA | Form::RET) && is_unconditional(last)
    });
    if !ends_cleanly {
        insts.push(exit());
        targets.push(None);
    }
    let self_index = insts.len();
    insts.push(bra());
    targets.push(Some(self_index));

    // Reorder inside blocks (the prologue, branches and the tail are fences and stay put).
    let mut moved: Vec<usize> = (0..insts.len()).collect();
    // What each instruction reads and writes, once: the scheduler and the control codes both
    // need it, and reordering only reorders it.
    let mut acc: Vec<Access> = Vec::with_capacity(insts.len());
    acc.resize_with(insts.len(), Access::default);
    for (a, inst) in acc.iter_mut().zip(&insts) {
        access_into(inst, a);
    }
    // The blocks, once for the scheduler and the control codes: reordering keeps them (it
    // moves instructions only inside their block, control transfers are fences that stay in
    // place, and branch targets keep their index).
    let lead = leaders(&insts, &targets);
    if mode == Mode::Normal {
        let order = list::schedule_with(&insts, &targets, &lead, &acc);
        (insts, targets) = list::permute_with_capacity(&insts, &targets, &order, cap);
        acc = order.iter().map(|&o| std::mem::take(&mut acc[o])).collect();
        for (new, &old) in order.iter().enumerate() {
            moved[old] = new;
        }
    }
    let mut ctrl = assign_control_with(&insts, &targets, &lead, mode, acc);
    // ptxas always gives the prologue stall 6; a longer stall is never wrong.
    if prologue_first {
        ctrl[0].stall = ctrl[0].stall.max(6);
    }
    // And `BRA self` gets 15, like the EXIT before it (0x7ff).
    ctrl[self_index].stall = 15;

    // Branch offsets.
    for (n, target) in targets.iter().enumerate() {
        let Some(t) = *target else { continue };
        let from = inst_addr(n);
        let mut to = inst_addr(t);
        // ptxas's `BRA self` names itself even in slot 0 (`0xe2400fffff87000f`).
        if t % 3 == 0 && t != n {
            to -= 8;
        }
        let rel = sm50::ctrl::branch_rel(from, to).ok_or(LayoutError::OutOfRange { from, to })?;
        insts[n].set(Field::Rel, u64::from(rel));
    }

    // Padding to a multiple of 8 instruction-or-control words (64 bytes = 6 instructions).
    // (`insts` has room for it already; `ctrl` is full here, and growing it by doubling
    // would copy it more than once.)
    let pad = (6 - insts.len() % 6) % 6;
    debug_assert!(insts.capacity() >= insts.len() + pad);
    ctrl.reserve_exact(pad);
    while insts.len() % 6 != 0 {
        insts.push(nop());
        ctrl.push(Ctrl::NEUTRAL);
    }

    let mut code = Vec::with_capacity(insts.len() / 3 * 4);
    let mut placed = Vec::with_capacity(insts.len());
    let mut exit_offsets = Vec::new();
    let mut s2r_ctaid_offsets = Vec::new();
    let mut warp_wide_offsets = Vec::new();
    let mut in_sam = false;
    for (b, chunk) in insts.chunks(3).enumerate() {
        let c = [ctrl[3 * b], ctrl[3 * b + 1], ctrl[3 * b + 2]];
        // (Encoded in place: an array of the three instructions copied each of them.)
        let words = [0, 1, 2].map(|j| sm50::encode(&chunk[j]));
        code.push(
            Bundle {
                ctrl: c,
                insts: words,
            }
            .ctrl_word(),
        );
        code.extend_from_slice(&words);
        for k in 0..3 {
            let n = 3 * b + k;
            let addr = inst_addr(n);
            // (Copied once, into its `Placed`: a local copy first was a second one.)
            let inst = &chunk[k];
            if inst.form == Form::EXIT {
                exit_offsets.push(addr as u32);
            }
            if inst.form == Form::S2R && matches!(inst.get(Field::Sr), Some(0x25..=0x27)) {
                s2r_ctaid_offsets.push(addr as u32);
            }
            match inst.form {
                Form::SAM => in_sam = true,
                Form::RAM => in_sam = false,
                Form::SHFL_RI | Form::SHFL_II | Form::SHFL_IR | Form::SHFL_RR if in_sam => {
                    warp_wide_offsets.push(addr as u32)
                }
                _ => {}
            }
            placed.push(Placed {
                addr,
                inst: *inst,
                ctrl: c[k],
            });
        }
    }
    targets.resize(placed.len(), None);
    Ok(Laid {
        code,
        placed,
        targets,
        exit_offsets,
        s2r_ctaid_offsets,
        warp_wide_offsets,
        moved,
    })
}

impl Laid {
    /// The listing in `cuobjdump -sass` shape: the control word alone on a line before each
    /// bundle, then `/*addr*/ text ; /* word */` per instruction.
    ///
    /// Written straight into one string (no string per line or per instruction): the
    /// listing is made for every kernel by default.
    pub fn listing(&self) -> String {
        let mut s = String::new();
        self.listing_to(&mut s);
        s
    }

    /// [`Self::listing`], appended to `s` (the driver collects every kernel's in one string).
    pub fn listing_to(&self, s: &mut String) {
        use std::fmt::Write as _;
        // About 130 bytes per instruction line, 87 per control word line.
        s.reserve(130 * self.placed.len() + 30 * self.placed.len());
        for (b, chunk) in self.placed.chunks(3).enumerate() {
            // `/* 0x%016x */` is always 24 characters, right-aligned to 86.
            let _ = writeln!(s, "{:62}/* {:#018x} */", "", self.code[4 * b]);
            for p in chunk {
                let _ = write!(s, "        /*{:04x}*/                   ", p.addr);
                let start = s.len();
                sm50::print_to(s, &p.inst, p.addr, p.ctrl.reuse);
                s.push_str(" ;");
                // Left-aligned in 40 characters, as `{:<40}` pads.
                let width = s[start..].chars().count();
                for _ in width..40 {
                    s.push(' ');
                }
                let _ = writeln!(s, " /* {:#018x} */", sm50::encode(&p.inst));
            }
        }
    }
}
