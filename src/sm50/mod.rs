//! Everything that knows SM50 bits.
//!
//! In: 64-bit instruction words (from a cubin) or instructions a compiler builds. Out: the
//! decoded form [`Inst`], its encoding, its nvdisasm-identical text, its register operands
//! and its timing class.
//!
//! The forms, their fields and their print templates are data (`isa/sm50.isa`); the
//! `leafold-isa` generator turns them into `sm50_gen.rs` (included below), which holds one
//! generated decode, encode, print and operand-visit function. This module only adds the
//! small run-time helpers the generated code calls (number and operand formatting) and the
//! public API around it. Control words and bundles live in [`ctrl`].
//!
//! Printing facts measured against nvdisasm 11.8 here (not all in sm50-isa.md): negated or
//! inverted immediates print as suffixes (`0x10.NEG`, `0x10.INV`, `1.5.ABS`); `.reuse`
//! follows `.H1`/`.B1` and `|x|`; FADD/DADD read their B register through reuse slot C;
//! variable-latency FP64, MUFU, conversions, IMUL, POPC/FLO, SHFL and memory operands never
//! print `.reuse`; conversions and XMAD print `c[b] [off]` with a space; floats print as C
//! `%.20g`, integral values below 1e9 as integers and other integral values as `%.20e`.
//!
//! Every instruction ptxas 11.8 writes for the corpus is modelled (tests/isa_corpus.rs), and
//! for both corpora at sm_50/52/53 every word decodes (tests/disasm_ptxas_corpora.rs). Textures (TEX, TEXS, TLDS, and the
//! bindless `.B`, TXD, TLD, TLD4, TXQ forms) and surfaces (SUST/SULD/SURED) decode with their
//! fields named after nvdisasm's text; they print their `.T`/`.P` phase from the control
//! word's reuse bits, as nvdisasm does. `MUFU` op 8 prints `.SQRT`, its sm_52/53 name
//! (nvdisasm -b SM50 calls it INVALIDMUFUOPCODE8; ptxas writes it only for sm_52+).
//! The scalar video ops (VADD, VABSDIFF, VMNMX, VSET, VSHL, VSHR, VMAD) decode with register
//! or 16-bit immediate B. Not modelled (decode returns an error): the SIMD video ops other
//! than ptxas's VABSDIFF4 forms, BAR.SCAN and register-operand BAR, B2R's barrier-number modes,
//! I2F/I2I half/byte selects on 16/32-bit sources, and F2F rounding/size combinations outside
//! the ones ptxas uses (see the `check` lines in `isa/sm50.isa`).
//!
//! Invariants: `decode` never panics and rejects every word no form matches (or whose enum
//! fields hold an encoding nvdisasm calls invalid); for every decodable word `w`,
//! `encode(&decode(w)?)` equals `w` with the bits no field covers cleared;
//! `Inst` field values are always within their field widths when built by `decode`, and
//! are masked to the width by `encode`.

pub mod banks;
pub mod crs;
pub mod ctrl;
pub mod sched;
pub mod slice;

pub use ctrl::{Bundle, Ctrl, CtrlError};

/// The generated tables and functions (see `isa/`). Kept in their own module so lints on
/// machine-written code stay local.
#[allow(unused_parens, unused_mut, clippy::all)]
mod generated {
    use super::{
        rt, Fence, FieldInfo, FieldKind, Flow, FormInfo, Inst, MemAccess, MemSpace, Operand, Props,
    };
    include!(concat!(env!("OUT_DIR"), "/sm50_gen.rs"));
}
use generated::{decode_gen, encode_gen, operands_gen, print_gen, valid_gen};
pub use generated::{values, Field, Form, FORMS, MAX_FIELDS};

/// How a field's value is interpreted (mirrors the description's field kinds).
#[derive(Clone, Copy, Debug)]
pub enum FieldKind {
    Reg,
    Pred,
    Flag,
    Unsigned,
    Signed,
    /// One printed name per encoding; `None` = an encoding nvdisasm rejects.
    Enum(&'static [Option<&'static str>]),
    /// Must hold this value.
    Const(u64),
}

/// One field of a form.
#[derive(Clone, Copy, Debug)]
pub struct FieldInfo {
    pub field: Field,
    pub kind: FieldKind,
    /// `(start, len)` pieces, low piece first.
    pub bits: &'static [(u32, u32)],
    /// Total width in bits.
    pub len: u32,
}

/// One encoding form, as described in `isa/sm50.isa`.
#[derive(Clone, Copy, Debug)]
pub struct FormInfo {
    pub form: Form,
    pub name: &'static str,
    /// The family (mnemonic root), e.g. `LEA_HI` for `LEA_HI_C`.
    pub class: &'static str,
    /// The class's number (classes in order of first appearance in `isa/sm50.isa`): equal
    /// numbers, the same class.
    pub class_id: u16,
    pub opcode: u64,
    pub mask: u64,
    pub variable_latency: bool,
    /// How the form was verified (tag from sm50-isa.md, or "V-rt this repo").
    pub verified: &'static str,
    /// What the passes need to know of the form's class (the `class` line's attributes).
    pub props: Props,
    pub fields: &'static [FieldInfo],
}

/// What the compiler's passes need to know of an instruction class, stated once in
/// `isa/sm50.isa` (the optional attributes of its `class` line, documented in its header)
/// rather than as lists of class names in the passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Props {
    /// How the class takes part in control flow.
    pub flow: Flow,
    /// A control transfer: the next instruction starts a block.
    pub transfer: bool,
    /// Whether the scheduler keeps it in place relative to every instruction of its block.
    pub fence: Fence,
    /// The stall ptxas always puts after it (1: no minimum of its own).
    pub min_stall: u8,
    /// Modelled cycles from issue to result when its latency is variable.
    pub cycles: u16,
    /// The memory its address (or texture/surface handle) names.
    pub space: MemSpace,
    /// What it does to that memory.
    pub access: MemAccess,
    /// The form exists only on sm_53.
    pub sm53: bool,
    /// If-conversion may put it under a guard it adds (computation, moves, memory accesses).
    pub predicable: bool,
    /// Its result is data brought into the integer arithmetic (a special register, another
    /// lane's value, a texture fetch, floating point): the address slice does not follow
    /// its sources.
    pub source: bool,
    /// ptxas dual-issues it as the second of a pair although it is neither variable-latency
    /// nor a control transfer (`SSY`, `PBK`, `DEPBAR`).
    pub dual_second: bool,
}

/// How an instruction class takes part in control flow (`flow=` in `isa/sm50.isa`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Other,
    Bra,
    Cal,
    Sync,
    Brk,
    Ret,
    Brx,
    Exit,
    Ssy,
    Pbk,
    /// `PRET`: pushes a return address for an indirect call (never emitted).
    Pret,
    /// `JCAL`: a call of a system function, whose target the loader resolves.
    Jcal,
}

/// Whether an instruction class is a scheduling fence (`fence=` in `isa/sm50.isa`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fence {
    No,
    Yes,
    /// Only when it reads a clock or timer (`S2R`).
    Clock,
}

/// The memory an instruction class accesses (`space=` in `isa/sm50.isa`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemSpace {
    None,
    Global,
    /// Generic addressing (`LD`, `ST`): any of global, local and shared.
    Generic,
    Local,
    Shared,
    Const,
    /// Through the texture unit (texture fetches and `TXQ`).
    Texture,
    /// Surface loads, stores and reductions.
    Surface,
}

/// What an instruction class does to the memory of its [`MemSpace`] (`access=` in
/// `isa/sm50.isa`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemAccess {
    None,
    Load,
    Store,
    /// Reads and writes (atomics and reductions).
    Atomic,
    /// Reads a texture's header only (`TXQ`).
    Query,
}

/// Offset of the first kernel parameter in constant bank 0 (`c[0x0][0x140]`, sm50-isa.md §4):
/// the driver's launch data fills the bytes before it.
pub const PARAM_BASE: u32 = 0x140;

impl Form {
    pub fn info(self) -> &'static FormInfo {
        &FORMS[self as usize]
    }

    /// Whether the form exists only on sm_53 (the half-precision `HADD2`, `HMUL2`, `HFMA2`,
    /// `HSETP2`, `HSET2`): nvdisasm decodes them under `-b SM53` only, and selection emits
    /// them only for `-arch sm_53`.
    pub fn needs_sm53(self) -> bool {
        self.info().props.sm53
    }
}

/// A decoded (or compiler-built) instruction: its form and one value per field of the form,
/// in the form's field order (`FormInfo::fields`).
///
/// Values are stored in 32 bits: no SM50 field is wider (the generator in `isa/` checks it),
/// and [`Inst::set`] / [`Inst::with_signed`] refuse or mask values that do not fit their
/// field. Half the size of 64-bit slots matters: every pass after selection moves and copies
/// instructions (72 bytes each rather than 144).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    pub form: Form,
    pub f: [u32; MAX_FIELDS],
}

/// A register, predicate or carry-flag operand, as the operand visitor reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// `width` consecutive registers starting at `reg` (1, 2 or 4).
    Reg {
        reg: u8,
        width: u8,
        def: bool,
    },
    Pred {
        pred: u8,
        def: bool,
    },
    /// The condition-code/carry flag (`.CC` writes it, `.X` reads it).
    Cc {
        def: bool,
    },
}

/// Timing class of one instruction (see sm50-isa.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Variable latency: results must be guarded by a scoreboard, not a stall count.
    pub variable: bool,
    pub writes_cc: bool,
    pub reads_cc: bool,
    pub writes_pred: bool,
}

/// Why a word does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("unknown or invalid SM50 instruction word {0:#018x}")]
    Unknown(u64),
}

/// Decode one 64-bit instruction word.
pub fn decode(word: u64) -> Result<Inst, DecodeError> {
    decode_gen(word).ok_or(DecodeError::Unknown(word))
}

/// Encode an instruction. Field values wider than their field are truncated.
pub fn encode(inst: &Inst) -> u64 {
    encode_gen(inst)
}

/// The text nvdisasm/cuobjdump print for this instruction at `addr` (the address of the
/// instruction itself), with `.reuse` flags taken from the control word's `reuse` bits.
/// The guard (`@P0 `) is included; the trailing ` ;` is not.
pub fn print(inst: &Inst, addr: u64, reuse: u8) -> String {
    let mut s = String::new();
    print_to(&mut s, inst, addr, reuse);
    s
}

/// [`print`], appended to `s` (a listing writes every instruction into one string).
pub fn print_to(s: &mut String, inst: &Inst, addr: u64, reuse: u8) {
    let start = s.len();
    if let (Some(pg), Some(neg)) = (inst.get(Field::Pg), inst.get(Field::Pgn)) {
        if !(pg == 7 && neg == 0) {
            s.push('@');
            if neg != 0 {
                s.push('!');
            }
            rt::pred(s, pg);
            s.push(' ');
        }
    }
    print_gen(inst, addr, reuse, s);
    // `+INF ` carries a trailing space inside operand lists, none at the end of the line.
    s.truncate(start + s[start..].trim_end().len());
}

/// [`Inst::slot`] for every form and field, built once: `slots[form * stride + field]` is the
/// field's index in the form's field list, [`NO_SLOT`] when the form has no such field, and
/// the field's width in bits beside it (what [`Inst::set`] checks: one table entry, not a
/// second read of the form's field list). (Every pass reads fields through `get`; a search of
/// the field list per read was a visible cost.)
struct SlotTable {
    stride: usize,
    slots: Vec<Slot>,
}

/// One entry of [`SlotTable`].
#[derive(Clone, Copy)]
struct Slot {
    index: u8,
    len: u8,
}

const NO_SLOT: u8 = u8::MAX;

fn slot_table() -> &'static SlotTable {
    static TABLE: std::sync::OnceLock<SlotTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let stride = FORMS
            .iter()
            .flat_map(|f| f.fields.iter())
            .map(|f| f.field as usize + 1)
            .max()
            .unwrap_or(0);
        let mut slots = vec![
            Slot {
                index: NO_SLOT,
                len: 0
            };
            FORMS.len() * stride
        ];
        for (n, form) in FORMS.iter().enumerate() {
            debug_assert_eq!(form.form as usize, n);
            // The first field of that name, as a search of the list finds it.
            for (k, f) in form.fields.iter().enumerate().rev() {
                slots[n * stride + f.field as usize] = Slot {
                    index: u8::try_from(k).expect("fewer than 255 fields per form"),
                    len: u8::try_from(f.len).expect("fields are at most 32 bits"),
                };
            }
        }
        SlotTable { stride, slots }
    })
}

impl Inst {
    /// A new instruction of `form` with every field at its neutral value: registers RZ,
    /// predicates PT (guard: always), constants at their required value, enums at their
    /// unprinted (else first valid) value, everything else 0. Forms with cross-field checks
    /// (conversions) may need fields set before the result is valid: see [`Inst::is_valid`].
    pub fn new(form: Form) -> Inst {
        // Every form's neutral instruction, built once (selection and scheduling make one
        // per instruction, and building it walks the form's fields).
        static NEUTRAL: std::sync::OnceLock<Vec<Inst>> = std::sync::OnceLock::new();
        let table =
            NEUTRAL.get_or_init(|| FORMS.iter().map(|f| Inst::build_neutral(f.form)).collect());
        table[form as usize]
    }

    /// [`Inst::new`] computed from the form's field list.
    fn build_neutral(form: Form) -> Inst {
        let mut i = Inst {
            form,
            f: [0; MAX_FIELDS],
        };
        for (k, fi) in form.info().fields.iter().enumerate() {
            let v: u64 = match fi.kind {
                FieldKind::Reg => 255,
                FieldKind::Pred => 7,
                FieldKind::Const(v) => v,
                FieldKind::Enum(names) => names
                    .iter()
                    .position(|n| *n == Some(""))
                    .or_else(|| names.iter().position(Option::is_some))
                    .unwrap_or(0) as u64,
                _ => 0,
            };
            i.f[k] = u32::try_from(v).expect("field values fit 32 bits");
        }
        // Lane masks default to all lanes.
        if let Some(k) = i.slot(Field::Lm) {
            i.f[k] = 0xf;
        }
        i
    }

    pub fn info(&self) -> &'static FormInfo {
        self.form.info()
    }

    /// Whether the form's cross-field conditions hold (e.g. F2F rounding vs. sizes), i.e.
    /// whether `decode(encode(self))` gives `self` back.
    pub fn is_valid(&self) -> bool {
        valid_gen(self)
    }

    /// Index of `field` in this form's field list.
    pub fn slot(&self, field: Field) -> Option<usize> {
        self.slot_entry(field).map(|s| usize::from(s.index))
    }

    /// `field`'s [`Slot`] in this form, `None` when the form has no such field.
    fn slot_entry(&self, field: Field) -> Option<Slot> {
        let t = slot_table();
        // A field no form has lies past the table's width.
        if field as usize >= t.stride {
            return None;
        }
        let s = t.slots[self.form as usize * t.stride + field as usize];
        (s.index != NO_SLOT).then_some(s)
    }

    /// A field's raw value, or `None` when the form has no such field.
    pub fn get(&self, field: Field) -> Option<u64> {
        self.slot(field).map(|k| u64::from(self.f[k]))
    }

    /// Set a field (builder style). Panics when the form has no such field or the value
    /// does not fit: both are compiler bugs, never user input.
    pub fn with(mut self, field: Field, value: u64) -> Inst {
        self.set(field, value);
        self
    }

    /// Set a signed field value (offsets, immediates), stored two's complement in the field.
    pub fn with_signed(mut self, field: Field, value: i64) -> Inst {
        let k = self
            .slot(field)
            .unwrap_or_else(|| panic!("{:?} has no field {:?}", self.form, field));
        let len = self.info().fields[k].len;
        let mask = if len == 64 { !0 } else { (1u64 << len) - 1 };
        let min = -(1i64 << (len - 1));
        let max = (1i64 << (len - 1)) - 1;
        assert!(
            value >= min && value <= max,
            "{value} does not fit {len} signed bits"
        );
        // Fields are at most 32 bits wide (see `Inst`), so the masked value fits.
        self.f[k] = ((value as u64) & mask) as u32;
        self
    }

    pub fn set(&mut self, field: Field, value: u64) {
        match self.slot_entry(field) {
            // Fields are at most 32 bits wide, so a value that fits keeps every bit in the cast.
            Some(s) if value >> s.len == 0 => self.f[usize::from(s.index)] = value as u32,
            _ => self.set_failed(field, value),
        }
    }

    /// [`Inst::set`]'s panic, out of line: the common path stays a table read and a store.
    #[cold]
    #[inline(never)]
    fn set_failed(&self, field: Field, value: u64) -> ! {
        match self.slot_entry(field) {
            None => panic!("{:?} has no field {:?}", self.form, field),
            Some(s) => panic!("{value:#x} does not fit {field:?} ({} bits)", s.len),
        }
    }

    /// Visit every register, predicate and carry-flag operand (RZ and PT are not operands).
    pub fn operands(&self, mut v: impl FnMut(Operand)) {
        operands_gen(self, &mut v)
    }

    /// Timing class: fixed or variable latency, and which flags it writes or reads.
    pub fn timing(&self) -> Timing {
        let mut t = Timing {
            variable: self.info().variable_latency,
            writes_cc: false,
            reads_cc: false,
            writes_pred: false,
        };
        self.operands(|o| match o {
            Operand::Cc { def: true } => t.writes_cc = true,
            Operand::Cc { def: false } => t.reads_cc = true,
            Operand::Pred { def: true, .. } => t.writes_pred = true,
            _ => {}
        });
        t
    }
}

/// Helpers called by the generated printer: nvdisasm's number and operand spelling.
pub mod rt {
    // `write!` into the string rather than `push_str(&format!(..))`: no temporary string
    // per register or number printed.
    use std::fmt::Write as _;

    /// Sign-extend the low `bits` bits of `v`.
    pub fn sext(v: u64, bits: u32) -> u64 {
        let sh = 64 - bits;
        (((v << sh) as i64) >> sh) as u64
    }

    pub fn hex(s: &mut String, v: u64) {
        let _ = write!(s, "{v:#x}");
    }

    /// Signed hex: `-0x2`.
    pub fn shex(s: &mut String, v: u64) {
        let v = v as i64;
        if v < 0 {
            let _ = write!(s, "-{:#x}", v.unsigned_abs());
        } else {
            let _ = write!(s, "{v:#x}");
        }
    }

    pub fn reg(s: &mut String, r: u64, reuse: bool) {
        if r == 255 {
            s.push_str("RZ");
        } else {
            let _ = write!(s, "R{r}");
        }
        if reuse {
            s.push_str(".reuse");
        }
    }

    pub fn pred(s: &mut String, p: u64) {
        if p == 7 {
            s.push_str("PT");
        } else {
            let _ = write!(s, "P{p}");
        }
    }

    /// `c[bank][offset]`: the field holds offset/4; the byte offset prints as signed 16-bit.
    pub fn cbuf(s: &mut String, bank: u64, off4: u64) {
        let _ = write!(s, "c[{bank:#x}][");
        shex(s, sext(off4 << 2, 16));
        s.push(']');
    }

    /// nvdisasm's spelling of a negative immediate in IADD/ISCADD/IADD3/LOP: the magnitude
    /// followed by `.NEG`.
    pub fn neg_suffix(s: &mut String, v: u64) {
        let v = v as i64;
        hex(s, v.unsigned_abs());
        if v < 0 {
            s.push_str(".NEG");
        }
    }

    /// `c[bank] [offset]`: XMAD's constant operand, which nvdisasm prints with a space.
    pub fn cbuf_spaced(s: &mut String, bank: u64, off4: u64) {
        let _ = write!(s, "c[{bank:#x}] [");
        shex(s, sext(off4 << 2, 16));
        s.push(']');
    }

    /// Indexed constant `c[bank][Ra+off]`.
    pub fn cbufr(s: &mut String, bank: u64, ra: u64, off: u64, reuse: bool) {
        let _ = write!(s, "c[{bank:#x}]");
        // nvdisasm prints no `.reuse` inside the brackets, and `c[b][0x0]` (not `[RZ]`)
        // for an absolute offset of zero.
        let _ = reuse;
        if ra == 255 {
            s.push('[');
            hex(s, off);
            s.push(']');
        } else {
            mem(s, ra, off, 16, false);
        }
    }

    /// Memory address `[Ra+off]`: offset omitted when 0; with Ra = RZ the offset alone,
    /// printed unsigned (`[RZ]` when it is 0 too).
    pub fn mem(s: &mut String, ra: u64, off: u64, bits: u32, reuse: bool) {
        s.push('[');
        if ra == 255 && off == 0 {
            s.push_str("RZ");
        } else if ra == 255 {
            hex(s, off);
        } else {
            reg(s, ra, reuse);
            if off != 0 {
                s.push('+');
                shex(s, sext(off, bits));
            }
        }
        s.push(']');
    }

    /// Word-scaled offsets (shared-memory atomics, CCTL): `[Ra+off*4]`. With RZ nvdisasm
    /// 11.8 prints the unsigned `bits + 2`-bit byte address (`CCTL.E.PF1 [0xffffffc0]`,
    /// `CCTLL.PF1 [0xffffc0]`, `ATOMS.ADD R0, [0xfffffc], R0`).
    pub fn mem4(s: &mut String, ra: u64, off: u64, bits: u32) {
        if ra == 255 {
            mem(s, ra, (off << 2) & ((1u64 << (bits + 2)) - 1), 64, false);
        } else {
            mem(s, ra, sext(off, bits).wrapping_mul(4), 64, false);
        }
    }

    /// An FP32 immediate (bits of an f32).
    pub fn f32(s: &mut String, bits: u32) {
        // nvdisasm widens FP32 immediates to double first, which quiets every NaN.
        s.push_str(&float_text(
            f32::from_bits(bits) as f64,
            bits >> 31 != 0,
            true,
        ));
    }

    /// An FP64 immediate (bits of an f64).
    pub fn f64(s: &mut String, bits: u64) {
        s.push_str(&float_text(
            f64::from_bits(bits),
            bits >> 63 != 0,
            bits >> 51 & 1 != 0,
        ));
    }

    /// nvdisasm's float spelling, inferred from its output: integers below 1e9 (probed:
    /// 999999936 as an integer, 1e9 in exponent form) print as integers, other integers
    /// as C `%.20e`, everything else as C `%.20g`; -0 as `-0.0 `; infinities and NaNs as `+INF `,
    /// `+QNAN `, `+SNAN ` (with the trailing space).
    /// `quiet` is the NaN's quiet bit: nvdisasm prints `QNAN` or `SNAN`.
    fn float_text(v: f64, neg: bool, quiet: bool) -> String {
        if v.is_nan() {
            let sign = if neg { '-' } else { '+' };
            let kind = if quiet { "QNAN" } else { "SNAN" };
            return format!("{sign}{kind} ");
        }
        if v.is_infinite() {
            return if neg { "-INF ".into() } else { "+INF ".into() };
        }
        if v == 0.0 {
            // Probed: nvdisasm spells negative zero `-0.0 ` (trailing space, like INF).
            return if neg { "-0.0 ".into() } else { "0".into() };
        }
        if v.fract() == 0.0 && v.abs() < 1e9 {
            return format!("{}", v as i64);
        }
        if v.fract() == 0.0 {
            return c_exp(v, 20, false);
        }
        c_g(v, 20)
    }

    /// C `%.{prec}e` (optionally stripping trailing zeros as `%g` does).
    fn c_exp(v: f64, prec: usize, strip: bool) -> String {
        let t = format!("{v:.prec$e}");
        let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let mut m = m.to_string();
        if strip && m.contains('.') {
            m = m.trim_end_matches('0').trim_end_matches('.').to_string();
        }
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }

    /// C `%.{p}g`.
    fn c_g(v: f64, p: usize) -> String {
        let t = format!("{v:.prec$e}", prec = p - 1);
        let e: i32 = t.split_once('e').map_or(0, |(_, e)| e.parse().unwrap_or(0));
        if e < -4 || e >= p as i32 {
            c_exp(v, p - 1, true)
        } else {
            let prec = (p as i32 - 1 - e).max(0) as usize;
            let f = format!("{v:.prec$}");
            if f.contains('.') {
                f.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                f
            }
        }
    }

    /// DEPBAR's immediate wait set `{0,3}` (nothing when empty).
    pub fn sb_set(s: &mut String, set: u64) {
        if set != 0 {
            let v: Vec<String> = (0..6)
                .rev() // nvdisasm lists the highest scoreboard first
                .filter(|i| set >> i & 1 != 0)
                .map(|i| i.to_string())
                .collect();
            s.push_str(&format!("{{{}}}", v.join(",")));
        }
    }

    /// Registers a memory size code names (0..4 → 1, .64 → 2, .128 → 4).
    pub fn mem_width(size: u64) -> u8 {
        match size {
            5 => 2,
            6 | 7 => 4,
            _ => 1,
        }
    }
}

impl Inst {
    /// An instruction of `form` with random field values that nvdisasm accepts: enum fields
    /// take only valid encodings and constant fields their required value. `next` supplies
    /// random 64-bit numbers (tests pass a seeded generator).
    pub fn random(form: Form, next: &mut dyn FnMut() -> u64) -> Inst {
        // Retry until the cross-field checks hold. Every form's checks accept a sizeable
        // share of random values, so failing 10000 times means the description is wrong.
        for _ in 0..10_000 {
            let i = Inst::random_fields(form, next);
            if valid_gen(&i) {
                return i;
            }
        }
        panic!("{form:?}: no random instruction satisfies its check conditions")
    }

    fn random_fields(form: Form, next: &mut dyn FnMut() -> u64) -> Inst {
        let mut i = Inst::new(form);
        for (k, fi) in form.info().fields.iter().enumerate() {
            let mask = (1u64 << fi.len) - 1;
            let v = match fi.kind {
                FieldKind::Const(v) => v,
                FieldKind::Enum(names) => {
                    let valid: Vec<u64> = (0..names.len() as u64)
                        .filter(|&v| names[v as usize].is_some())
                        .collect();
                    valid[(next() % valid.len() as u64) as usize]
                }
                _ => next() & mask,
            };
            i.f[k] = u32::try_from(v).expect("fields are at most 32 bits");
        }
        i
    }
}
