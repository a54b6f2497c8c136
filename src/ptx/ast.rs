//! The PTX abstract syntax tree.
//!
//! In: nothing (plain data). Out: the types [`crate::ptx::parse`] builds, [`crate::ptx::check`]
//! validates and a later IR builder lowers. Invariants: every node that a diagnostic can point
//! at carries a [`Span`] into its source file; names are kept exactly as written (resolution of
//! a name to a register, variable, function or label is the checker's job, because PTX allows a
//! variable to be named `%L1` and a register to be named `temp`; each name carries an id,
//! equal within a module exactly when the texts are equal, see [`NameTable`], so later stages
//! key their tables by id instead of hashing text, and the names with one text share it, see
//! [`NameText`]); immediates are already folded
//! to their value (constant expressions are evaluated while parsing), so a later stage never
//! evaluates PTX expressions itself. Module-level directives stay in source order in
//! [`Module::items`] so printing gives the file back in the same order.
//!
//! # Files of this module
//!
//! - `names.rs`: Names in the AST: a [`Name`] is an interned string with its span;
//!   [`NameTable`] interns each distinct text once per module, and [`NameMemo`] caches a value
//!   per interned name.
//! - `erase.rs`: Span erasure.

mod names;
pub use names::*;
mod erase;
use crate::error::Span;
pub use crate::ptx::opcodes::Opcode;
use std::fmt;
use std::sync::Arc;

/// A whole PTX file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub items: Vec<Item>,
    pub span: Span,
    /// What the parser learned about each distinct name of the file (by [`Name::id`]).
    pub names: NameTable,
}

impl Module {
    /// `.version` as (major, minor), if present.
    pub fn version(&self) -> Option<(u32, u32)> {
        self.items.iter().find_map(|i| match i {
            Item::Version { major, minor, .. } => Some((*major, *minor)),
            _ => None,
        })
    }

    /// The names listed by `.target` (e.g. `sm_10`, `map_f64_to_f32`).
    pub fn targets(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Target { targets, .. } => Some(targets.iter().map(|t| t.text.as_str())),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// `.address_size`; absent means 32.
    pub fn address_size(&self) -> u32 {
        self.items
            .iter()
            .find_map(|i| match i {
                Item::AddressSize { size, .. } => Some(*size),
                _ => None,
            })
            .unwrap_or(32)
    }

    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.items.iter().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
    }
}

/// One top-level directive or declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Version {
        major: u32,
        minor: u32,
        span: Span,
    },
    Target {
        targets: Vec<Name>,
        span: Span,
    },
    AddressSize {
        size: u32,
        span: Span,
    },
    /// `.file 1 "name" [, timestamp, size]`
    File {
        index: u32,
        path: String,
        extra: Vec<u64>,
        span: Span,
    },
    Loc(Loc),
    Pragma {
        text: String,
        span: Span,
    },
    /// `.section .debug_xxx { ... }`: the body is kept verbatim (DWARF bytes are not compiled).
    Section {
        name: String,
        body: String,
        span: Span,
    },
    Var(VarDecl),
    Function(Function),
    /// `.alias fAlias, fAliasee;` (PTX 6.3): calls of `alias` are calls of `aliasee`
    /// (resolved by [`crate::ptx::alias`] before the checker runs).
    Alias {
        alias: Name,
        aliasee: Name,
        span: Span,
    },
}

/// `.loc file line col [, function_name label, inlined_at f l c]`
#[derive(Clone, Debug, PartialEq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    /// Anything after the three numbers, kept verbatim (`, function_name $L..., inlined_at 1 2 3`).
    pub extra: String,
    pub span: Span,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    Extern,
    Visible,
    Weak,
    Common,
}

impl Linkage {
    pub fn name(self) -> &'static str {
        match self {
            Linkage::Extern => ".extern",
            Linkage::Visible => ".visible",
            Linkage::Weak => ".weak",
            Linkage::Common => ".common",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    /// `.shared::cluster` (`.shared::cta` is plain `Shared`). An instruction without a state
    /// space modifier uses generic addressing: [`Instruction::space`] is `None`.
    SharedCluster,
    Tex,
}

impl StateSpace {
    pub fn name(self) -> &'static str {
        match self {
            StateSpace::Reg => ".reg",
            StateSpace::Sreg => ".sreg",
            StateSpace::Const => ".const",
            StateSpace::Global => ".global",
            StateSpace::Local => ".local",
            StateSpace::Param => ".param",
            StateSpace::Shared => ".shared",
            StateSpace::SharedCluster => ".shared::cluster",
            StateSpace::Tex => ".tex",
        }
    }

    pub fn from_name(s: &str) -> Option<StateSpace> {
        Some(match s {
            "reg" => StateSpace::Reg,
            "sreg" => StateSpace::Sreg,
            "const" => StateSpace::Const,
            "global" => StateSpace::Global,
            "local" => StateSpace::Local,
            "param" => StateSpace::Param,
            "shared" | "shared::cta" => StateSpace::Shared,
            "shared::cluster" => StateSpace::SharedCluster,
            "tex" => StateSpace::Tex,
            _ => return None,
        })
    }
}

/// Fundamental and opaque PTX types.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    F32,
    F64,
    Bf16,
    Bf16x2,
    Tf32,
    E4m3,
    E5m2,
    E4m3x2,
    E5m2x2,
    Pred,
    TexRef,
    SamplerRef,
    SurfRef,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    Bits,
    Unsigned,
    Signed,
    Float,
    Pred,
    Opaque,
}

impl Type {
    pub const ALL: [Type; 28] = [
        Type::B8,
        Type::B16,
        Type::B32,
        Type::B64,
        Type::B128,
        Type::U8,
        Type::U16,
        Type::U32,
        Type::U64,
        Type::S8,
        Type::S16,
        Type::S32,
        Type::S64,
        Type::F16,
        Type::F16x2,
        Type::F32,
        Type::F64,
        Type::Bf16,
        Type::Bf16x2,
        Type::Tf32,
        Type::E4m3,
        Type::E5m2,
        Type::E4m3x2,
        Type::E5m2x2,
        Type::Pred,
        Type::TexRef,
        Type::SamplerRef,
        Type::SurfRef,
    ];

    /// Name without the dot.
    pub fn name(self) -> &'static str {
        match self {
            Type::B8 => "b8",
            Type::B16 => "b16",
            Type::B32 => "b32",
            Type::B64 => "b64",
            Type::B128 => "b128",
            Type::U8 => "u8",
            Type::U16 => "u16",
            Type::U32 => "u32",
            Type::U64 => "u64",
            Type::S8 => "s8",
            Type::S16 => "s16",
            Type::S32 => "s32",
            Type::S64 => "s64",
            Type::F16 => "f16",
            Type::F16x2 => "f16x2",
            Type::F32 => "f32",
            Type::F64 => "f64",
            Type::Bf16 => "bf16",
            Type::Bf16x2 => "bf16x2",
            Type::Tf32 => "tf32",
            Type::E4m3 => "e4m3",
            Type::E5m2 => "e5m2",
            Type::E4m3x2 => "e4m3x2",
            Type::E5m2x2 => "e5m2x2",
            Type::Pred => "pred",
            Type::TexRef => "texref",
            Type::SamplerRef => "samplerref",
            Type::SurfRef => "surfref",
        }
    }

    /// The type of a modifier word (`u32` for `.u32`), matched byte by byte (a slice pattern
    /// per name: a decision on length and bytes, where a match on the string compared it
    /// with the names one after another; every modifier of every instruction is tried).
    pub fn from_name(s: &str) -> Option<Type> {
        Some(match s.as_bytes() {
            [b'b', b'8'] => Type::B8,
            [b'b', b'1', b'6'] => Type::B16,
            [b'b', b'3', b'2'] => Type::B32,
            [b'b', b'6', b'4'] => Type::B64,
            [b'b', b'1', b'2', b'8'] => Type::B128,
            [b'u', b'8'] => Type::U8,
            [b'u', b'1', b'6'] => Type::U16,
            [b'u', b'3', b'2'] => Type::U32,
            [b'u', b'6', b'4'] => Type::U64,
            [b's', b'8'] => Type::S8,
            [b's', b'1', b'6'] => Type::S16,
            [b's', b'3', b'2'] => Type::S32,
            [b's', b'6', b'4'] => Type::S64,
            [b'f', b'1', b'6'] => Type::F16,
            [b'f', b'1', b'6', b'x', b'2'] => Type::F16x2,
            [b'f', b'3', b'2'] => Type::F32,
            [b'f', b'6', b'4'] => Type::F64,
            [b'b', b'f', b'1', b'6'] => Type::Bf16,
            [b'b', b'f', b'1', b'6', b'x', b'2'] => Type::Bf16x2,
            [b't', b'f', b'3', b'2'] => Type::Tf32,
            [b'e', b'4', b'm', b'3'] => Type::E4m3,
            [b'e', b'5', b'm', b'2'] => Type::E5m2,
            [b'e', b'4', b'm', b'3', b'x', b'2'] => Type::E4m3x2,
            [b'e', b'5', b'm', b'2', b'x', b'2'] => Type::E5m2x2,
            [b'p', b'r', b'e', b'd'] => Type::Pred,
            [b't', b'e', b'x', b'r', b'e', b'f'] => Type::TexRef,
            [b's', b'a', b'm', b'p', b'l', b'e', b'r', b'r', b'e', b'f'] => Type::SamplerRef,
            [b's', b'u', b'r', b'f', b'r', b'e', b'f'] => Type::SurfRef,
            _ => return None,
        })
    }

    pub fn kind(self) -> TypeKind {
        use Type::*;
        match self {
            B8 | B16 | B32 | B64 | B128 => TypeKind::Bits,
            U8 | U16 | U32 | U64 => TypeKind::Unsigned,
            S8 | S16 | S32 | S64 => TypeKind::Signed,
            Pred => TypeKind::Pred,
            TexRef | SamplerRef | SurfRef => TypeKind::Opaque,
            _ => TypeKind::Float,
        }
    }

    /// Size in bits (predicates count as 1, opaque handles as 64).
    pub fn bits(self) -> u32 {
        use Type::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 | E4m3 | E5m2 => 8,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 => 16,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | Tf32 => 32,
            B64 | U64 | S64 | F64 | TexRef | SamplerRef | SurfRef => 64,
            B128 => 128,
        }
    }
}

/// A variable, register, parameter or texture declaration. One declaration may name several
/// variables (`.reg .u32 a, b, %r<10>;`); they share everything but name, dims and initializer.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub linkage: Vec<Linkage>,
    pub space: StateSpace,
    pub align: Option<u32>,
    /// `.v2`, `.v4` (or `.v8`).
    pub vector: Option<u32>,
    pub ty: Type,
    /// `.ptr [.space] [.align N]` on kernel parameters.
    pub ptr: Option<PtrAttr>,
    /// `.attribute(.managed)`, `.attribute(.unified(a, b))`.
    pub attributes: Vec<Attribute>,
    pub names: Vec<Declarator>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PtrAttr {
    pub space: Option<StateSpace>,
    pub align: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Attribute {
    Managed,
    Unified(u64, u64),
}

/// One declared name.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub name: Name,
    /// `%r<100>` declares `%r0` .. `%r99`.
    pub range: Option<u32>,
    /// Array dimensions as written; `None` is an omitted (`[]`) dimension.
    pub dims: Vec<Option<u64>>,
    pub init: Option<Init>,
}

impl Declarator {
    /// The dimensions with an omitted first dimension taken from the initializer's length.
    pub fn resolved_dims(&self) -> Vec<Option<u64>> {
        let mut dims = self.dims.clone();
        if let (Some(None), Some(Init::List(items, _))) = (dims.first(), &self.init) {
            dims[0] = Some(items.len() as u64);
        }
        dims
    }
}

/// A variable initializer.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Imm(Imm, Span),
    /// `var`, `var+off`, `generic(var)+off`, `0xFF(var)` (a byte mask of the address).
    Addr {
        name: Name,
        generic: bool,
        offset: i64,
        mask: Option<u64>,
        span: Span,
    },
    List(Vec<Init>, Span),
    /// `{ addr_mode_0 = clamp_to_edge, filter_mode = linear }`: the fields of an opaque
    /// `.samplerref`/`.texref` variable (texmode_independent).
    Fields(Vec<(Name, FieldValue)>, Span),
}

/// The value of an opaque-variable field: a keyword such as `clamp_to_edge` or a number.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    Word(Name),
    Int(i64),
}

impl Init {
    pub fn span(&self) -> Span {
        match self {
            Init::Imm(_, s) | Init::List(_, s) | Init::Fields(_, s) => *s,
            Init::Addr { span, .. } => *span,
        }
    }
}

/// A folded immediate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Imm {
    /// An integer; `unsigned` records a `U` suffix.
    Int { value: i64, unsigned: bool },
    /// `0fXXXXXXXX`: IEEE single bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float literal: IEEE double bits.
    F64(u64),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FuncKind {
    Entry,
    Func,
}

/// `.entry` or `.func`, with or without a body.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub linkage: Vec<Linkage>,
    pub kind: FuncKind,
    pub name: Name,
    /// Return parameters (`.func` only); `None` when the parentheses are absent.
    pub rets: Option<Vec<VarDecl>>,
    pub params: Vec<VarDecl>,
    /// Whether the parameter list had parentheses at all (`.entry k {` has none).
    pub params_parens: bool,
    pub noreturn: bool,
    pub perf: Vec<PerfDirective>,
    /// `None` for a declaration (`.func f (...);`).
    pub body: Option<Block>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PerfDirective {
    MaxNtid(Vec<u32>, Span),
    ReqNtid(Vec<u32>, Span),
    MinNctaPerSm(u32, Span),
    MaxNctaPerSm(u32, Span),
    MaxNreg(u32, Span),
    Pragma(String, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Statement>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Label(Name),
    Var(VarDecl),
    Instr(Instruction),
    Block(Block),
    Loc(Loc),
    Pragma(String, Span),
    /// `name: .branchtargets L1, L2;` (for `brx.idx`) or `name: .calltargets f, g;`.
    Targets {
        name: Name,
        calls: bool,
        targets: Vec<Name>,
        span: Span,
    },
    /// `name: .callprototype (rets) _ (params);`
    Prototype {
        name: Name,
        rets: Option<Vec<VarDecl>>,
        params: Vec<VarDecl>,
        noreturn: bool,
        span: Span,
    },
}

/// `@p` / `@!p`.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    pub negated: bool,
    pub pred: Name,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub guard: Option<Guard>,
    pub opcode: Opcode,
    pub opcode_span: Span,
    pub mods: Vec<Modifier>,
    pub operands: Vec<Operand>,
    pub span: Span,
}

/// One dot-modifier of an instruction, classified. Anything that is not a type, a state
/// space, a comparison, a rounding mode or a vector width is a `Flag` spelled as written
/// (without the dot), which the opcode table validates.
#[derive(Clone, Debug, PartialEq)]
pub enum Modifier {
    Type(Type),
    Space(StateSpace),
    Cmp(CmpOp),
    Round(Rounding),
    Vec(u32),
    Flag(&'static str),
    /// A modifier word of an open-ended opcode (`mma`, `wgmma`, `cp.async.bulk...`) that the
    /// table does not enumerate.
    Other(String),
}

impl Modifier {
    pub fn text(&self) -> String {
        match self {
            Modifier::Type(t) => t.name().to_string(),
            Modifier::Space(s) => s.name()[1..].to_string(),
            Modifier::Cmp(c) => c.name().to_string(),
            Modifier::Round(r) => r.name().to_string(),
            Modifier::Vec(n) => format!("v{n}"),
            Modifier::Flag(f) => f.to_string(),
            Modifier::Other(f) => f.clone(),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl CmpOp {
    pub const ALL: [CmpOp; 18] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Lo,
        CmpOp::Ls,
        CmpOp::Hi,
        CmpOp::Hs,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];
    pub fn name(self) -> &'static str {
        use CmpOp::*;
        match self {
            Eq => "eq",
            Ne => "ne",
            Lt => "lt",
            Le => "le",
            Gt => "gt",
            Ge => "ge",
            Lo => "lo",
            Ls => "ls",
            Hi => "hi",
            Hs => "hs",
            Equ => "equ",
            Neu => "neu",
            Ltu => "ltu",
            Leu => "leu",
            Gtu => "gtu",
            Geu => "geu",
            Num => "num",
            Nan => "nan",
        }
    }
    pub fn from_name(s: &str) -> Option<CmpOp> {
        Some(match s {
            "eq" => CmpOp::Eq,
            "ne" => CmpOp::Ne,
            "lt" => CmpOp::Lt,
            "le" => CmpOp::Le,
            "gt" => CmpOp::Gt,
            "ge" => CmpOp::Ge,
            "lo" => CmpOp::Lo,
            "ls" => CmpOp::Ls,
            "hi" => CmpOp::Hi,
            "hs" => CmpOp::Hs,
            "equ" => CmpOp::Equ,
            "neu" => CmpOp::Neu,
            "ltu" => CmpOp::Ltu,
            "leu" => CmpOp::Leu,
            "gtu" => CmpOp::Gtu,
            "geu" => CmpOp::Geu,
            "num" => CmpOp::Num,
            "nan" => CmpOp::Nan,
            _ => return None,
        })
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rounding {
    Rn,
    Rna,
    Rz,
    Rm,
    Rp,
    Rs,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

impl Rounding {
    pub const ALL: [Rounding; 10] = [
        Rounding::Rn,
        Rounding::Rna,
        Rounding::Rz,
        Rounding::Rm,
        Rounding::Rp,
        Rounding::Rs,
        Rounding::Rni,
        Rounding::Rzi,
        Rounding::Rmi,
        Rounding::Rpi,
    ];
    pub fn name(self) -> &'static str {
        use Rounding::*;
        match self {
            Rn => "rn",
            Rna => "rna",
            Rz => "rz",
            Rm => "rm",
            Rp => "rp",
            Rs => "rs",
            Rni => "rni",
            Rzi => "rzi",
            Rmi => "rmi",
            Rpi => "rpi",
        }
    }
    pub fn from_name(s: &str) -> Option<Rounding> {
        Some(match s {
            "rn" => Rounding::Rn,
            "rna" => Rounding::Rna,
            "rz" => Rounding::Rz,
            "rm" => Rounding::Rm,
            "rp" => Rounding::Rp,
            "rs" => Rounding::Rs,
            "rni" => Rounding::Rni,
            "rzi" => Rounding::Rzi,
            "rmi" => Rounding::Rmi,
            "rpi" => Rounding::Rpi,
            _ => return None,
        })
    }
}

impl Instruction {
    /// The type modifiers in order (`cvt.f32.s32` gives `[F32, S32]`).
    pub fn types(&self) -> Vec<Type> {
        self.type_mods().collect()
    }
    /// The type modifiers in order, as [`Instruction::types`] lists them, without
    /// allocating (checking and building read them for every instruction).
    pub fn type_mods(&self) -> impl DoubleEndedIterator<Item = Type> + '_ {
        self.mods.iter().filter_map(|m| match m {
            Modifier::Type(t) => Some(*t),
            _ => None,
        })
    }
    /// The type modifiers in order in a SmallVec (inline up to four), pushed one by one
    /// rather than collected through SmallVec's generic extend (the checker asks it of every
    /// instruction, the builder of every `cvt`).
    pub fn type_mod_list(&self) -> smallvec::SmallVec<[Type; 4]> {
        let mut out = smallvec::SmallVec::new();
        for t in self.type_mods() {
            out.push(t);
        }
        out
    }
    /// The last type modifier (the instruction type for most opcodes).
    pub fn ty(&self) -> Option<Type> {
        self.type_mods().next_back()
    }
    pub fn space(&self) -> Option<StateSpace> {
        self.mods.iter().find_map(|m| match m {
            Modifier::Space(s) => Some(*s),
            _ => None,
        })
    }
    pub fn cmp(&self) -> Option<CmpOp> {
        self.mods.iter().find_map(|m| match m {
            Modifier::Cmp(c) => Some(*c),
            _ => None,
        })
    }
    pub fn rounding(&self) -> Option<Rounding> {
        self.mods.iter().find_map(|m| match m {
            Modifier::Round(r) => Some(*r),
            _ => None,
        })
    }
    pub fn vector(&self) -> Option<u32> {
        self.mods.iter().find_map(|m| match m {
            Modifier::Vec(n) => Some(*n),
            _ => None,
        })
    }
    pub fn has_flag(&self, flag: &str) -> bool {
        self.mods
            .iter()
            .any(|m| matches!(m, Modifier::Flag(f) if *f == flag))
    }
}

/// Vector component selector `.x .y .z .w` (or `.r .g .b .a`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Component {
    X,
    Y,
    Z,
    W,
    R,
    G,
    B,
    A,
}

impl Component {
    pub fn from_name(s: &str) -> Option<Component> {
        Some(match s {
            "x" => Component::X,
            "y" => Component::Y,
            "z" => Component::Z,
            "w" => Component::W,
            "r" => Component::R,
            "g" => Component::G,
            "b" => Component::B,
            "a" => Component::A,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Component::X => "x",
            Component::Y => "y",
            Component::Z => "z",
            Component::W => "w",
            Component::R => "r",
            Component::G => "g",
            Component::B => "b",
            Component::A => "a",
        }
    }
    /// 0..3: `.x`/`.r` is 0, `.w`/`.a` is 3.
    pub fn index(self) -> u32 {
        match self {
            Component::X | Component::R => 0,
            Component::Y | Component::G => 1,
            Component::Z | Component::B => 2,
            Component::W | Component::A => 3,
        }
    }
}

/// The inside of `[...]`: an optional register or variable plus a signed byte offset.
#[derive(Clone, Debug, PartialEq)]
pub struct AddrExpr {
    pub base: Option<Name>,
    pub offset: i64,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, variable, function or label name (resolved by the checker).
    Name(Name),
    /// `%tid.x`, `%laneid`, `%clock64`: a special register, with its component if any.
    Special {
        name: Name,
        comp: Option<Component>,
    },
    /// `V.x`: one element of a vector register.
    Elem {
        name: Name,
        comp: Component,
    },
    Imm(Imm, Span),
    /// `[var]`, `[reg]`, `[reg+imm]`, `[var+imm]`, `[imm]`.
    Address(AddrExpr),
    /// `var+imm` without brackets: the address of a variable plus a byte offset (`mov`).
    NameOffset {
        name: Name,
        offset: i64,
        span: Span,
    },
    /// `var[imm]`, `var[reg+imm]`: array element notation. (The index is boxed: this rare
    /// form would otherwise make every operand 88 bytes instead of 56.)
    Indexed {
        base: Name,
        index: Box<AddrExpr>,
        span: Span,
    },
    /// `{a, b, c, d}`.
    Vector(Vec<Operand>, Span),
    /// `[tex, sampler, {x, y}]`: texture and surface operands.
    TexArgs(Vec<Operand>, Span),
    /// `(a, b)`: argument and return lists of `call`.
    List(Vec<Operand>, Span),
    /// `!p` as a source predicate.
    Not(Box<Operand>, Span),
    /// `p|q`: the two predicate destinations of `setp`/`shfl`.
    PredPair(Name, Name),
    /// `_`: the sink.
    Sink(Span),
    /// `r.b1`, `r.h0`, `r.b3210`, `r.h10`: a register with a video-instruction selector
    /// (operand byte/half selectors, destination merge selectors and SIMD masks).
    Selected {
        name: Name,
        sel: VideoSel,
    },
    /// `-r`, `-r.b1`: a negated source of `vmad` (video instructions only).
    Neg(Box<Operand>, Span),
}

/// The selector a video instruction writes after a register operand: `.b` or `.h`
/// followed by one to four digits 0..7, kept as written (`.b3210` is `digits = [3, 2, 1, 0]`,
/// `len = 4`); what the digits mean depends on the instruction and the operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct VideoSel {
    /// `.h` (halfwords) rather than `.b` (bytes).
    pub half: bool,
    pub digits: [u8; 4],
    pub len: u8,
}

impl VideoSel {
    /// Parses `b0`, `h1`, `b3210`, `h32`... (without the dot); `None` for anything else.
    pub fn parse(s: &str) -> Option<VideoSel> {
        let half = match s.as_bytes().first()? {
            b'b' => false,
            b'h' => true,
            _ => return None,
        };
        let rest = &s.as_bytes()[1..];
        if rest.is_empty() || rest.len() > 4 || !rest.iter().all(|c| (b'0'..=b'7').contains(c)) {
            return None;
        }
        let mut digits = [0; 4];
        for (k, c) in rest.iter().enumerate() {
            digits[k] = c - b'0';
        }
        Some(VideoSel {
            half,
            digits,
            len: rest.len() as u8,
        })
    }

    /// The digits as written, most significant lane first.
    pub fn digits(&self) -> &[u8] {
        &self.digits[..self.len as usize]
    }
}

impl std::fmt::Display for VideoSel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.half { "h" } else { "b" })?;
        for d in self.digits() {
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Name(n) => n.span,
            Operand::Special { name, .. } => name.span,
            Operand::Elem { name, .. } => name.span,
            Operand::Selected { name, .. } => name.span,
            Operand::Imm(_, s)
            | Operand::Vector(_, s)
            | Operand::TexArgs(_, s)
            | Operand::List(_, s)
            | Operand::Not(_, s)
            | Operand::Neg(_, s)
            | Operand::Sink(s) => *s,
            Operand::Address(a) => a.span,
            Operand::Indexed { span, .. } | Operand::NameOffset { span, .. } => *span,
            Operand::PredPair(a, b) => a.span.to(b.span),
        }
    }
}

/// Special register names PTX predefines (without components), sorted for binary search.
pub const SPECIAL_REGISTERS: &[&str] = &[
    "%aggr_smem_size",
    "%clock",
    "%clock64",
    "%clock_hi",
    "%cluster_ctaid",
    "%cluster_ctarank",
    "%cluster_nctaid",
    "%cluster_nctarank",
    "%clusterid",
    "%ctaid",
    "%current_graph_exec",
    "%dynamic_smem_size",
    "%envreg0",
    "%envreg1",
    "%envreg10",
    "%envreg11",
    "%envreg12",
    "%envreg13",
    "%envreg14",
    "%envreg15",
    "%envreg16",
    "%envreg17",
    "%envreg18",
    "%envreg19",
    "%envreg2",
    "%envreg20",
    "%envreg21",
    "%envreg22",
    "%envreg23",
    "%envreg24",
    "%envreg25",
    "%envreg26",
    "%envreg27",
    "%envreg28",
    "%envreg29",
    "%envreg3",
    "%envreg30",
    "%envreg31",
    "%envreg4",
    "%envreg5",
    "%envreg6",
    "%envreg7",
    "%envreg8",
    "%envreg9",
    "%globaltimer",
    "%globaltimer_hi",
    "%globaltimer_lo",
    "%gridid",
    "%is_explicit_cluster",
    "%laneid",
    "%lanemask_eq",
    "%lanemask_ge",
    "%lanemask_gt",
    "%lanemask_le",
    "%lanemask_lt",
    "%nclusterid",
    "%nctaid",
    "%nsmid",
    "%ntid",
    "%nwarpid",
    "%pm0",
    "%pm0_64",
    "%pm1",
    "%pm1_64",
    "%pm2",
    "%pm2_64",
    "%pm3",
    "%pm3_64",
    "%pm4",
    "%pm4_64",
    "%pm5",
    "%pm5_64",
    "%pm6",
    "%pm6_64",
    "%pm7",
    "%pm7_64",
    "%reserved_smem_offset_0",
    "%reserved_smem_offset_1",
    "%reserved_smem_offset_begin",
    "%reserved_smem_offset_cap",
    "%reserved_smem_offset_end",
    "%smid",
    "%tid",
    "%total_smem_size",
    "%warpid",
];

/// Whether a special register has `.x/.y/.z` components.
pub fn special_has_components(name: &str) -> bool {
    matches!(
        name,
        "%tid"
            | "%ntid"
            | "%ctaid"
            | "%nctaid"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
    )
}

pub fn is_special_register(name: &str) -> bool {
    // Called for every name operand. Virtual registers (`%r12`, `%fd3`) end in a digit, and
    // the only special registers that do start with `%envreg`, `%pm`, `%clock64` or
    // `%reserved`, so almost every name is rejected without a string search.
    let b = name.as_bytes();
    if b.first() != Some(&b'%') {
        return false;
    }
    if b.last().is_some_and(|c| c.is_ascii_digit())
        && !(name.starts_with("%envreg")
            || name.starts_with("%pm")
            || name.starts_with("%clock")
            || name.starts_with("%reserved"))
    {
        return false;
    }
    SPECIAL_REGISTERS.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_registers_are_sorted_and_found() {
        assert!(SPECIAL_REGISTERS.windows(2).all(|w| w[0] < w[1]));
        for r in SPECIAL_REGISTERS {
            assert!(is_special_register(r));
        }
        assert!(!is_special_register("%r1"));
    }

    #[test]
    fn name_tables_agree() {
        for t in Type::ALL {
            assert_eq!(Type::from_name(t.name()), Some(t));
            // A word one byte shorter or longer is its own type or none.
            let n = t.name();
            for w in [&n[..n.len() - 1], &format!("{n}x"), &format!("x{n}")] {
                if let Some(u) = Type::from_name(w) {
                    assert_eq!(u.name(), w);
                }
            }
        }
        assert_eq!(Type::from_name(""), None);
        for c in CmpOp::ALL {
            assert_eq!(CmpOp::from_name(c.name()), Some(c));
        }
        for r in Rounding::ALL {
            assert_eq!(Rounding::from_name(r.name()), Some(r));
        }
    }
}
