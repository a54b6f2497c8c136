//! The PTX opcode table: one row per opcode, as data.
//!
//! In: an opcode word and modifier words as written. Out: an [`Opcode`] and, per opcode, an
//! [`OpInfo`] saying which modifiers it accepts (by class: types, state spaces, comparisons,
//! rounding modes, vector widths, plus a list of other words), how many operands it takes and
//! which operand typing rule the checker applies. The parser uses it to reject unknown opcodes
//! and modifiers with a precise message; the checker uses the operand rule.
//!
//! Invariants: `TABLE[op as usize].name == op.name()`; the table is the only place opcode
//! knowledge lives. Opcodes whose modifier sets are huge and still growing (`mma`, `wgmma`,
//! `cp.async.bulk.tensor`, ...) are marked `open`: any modifier word is accepted and kept as
//! written. Coverage: the PTX ISA through 8.x.

/// Type classes an opcode accepts as modifiers (bit set).
pub mod tc {
    pub const B: u32 = 1; // b8 b16 b32 b64
    pub const B128: u32 = 2;
    pub const U: u32 = 4;
    pub const S: u32 = 8;
    pub const F32: u32 = 16; // f32
    pub const F64: u32 = 32;
    pub const H: u32 = 64; // f16 f16x2 bf16 bf16x2
    pub const PRED: u32 = 128;
    pub const F8: u32 = 256; // e4m3 e5m2 (x2) tf32
    pub const OPAQUE: u32 = 512;
    pub const I: u32 = U | S;
    pub const F: u32 = F32 | F64;
    pub const ALL: u32 = B | B128 | I | F | H | PRED | F8 | OPAQUE;
    pub const BIS: u32 = B | I;
}

/// How the checker types an opcode's operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Every register operand has the instruction type (`add`, `mov`, `and`, ...).
    Same,
    /// `d, a` have the instruction type, `b` is a 32-bit shift amount.
    Shift,
    /// `d` (or `p|q`) predicate, `a, b` instruction type, optional predicate `c`.
    Setp,
    /// `d` first type, `a, b` second type, optional predicate `c`.
    Set,
    /// `d, a, b` instruction type, `c` predicate.
    Selp,
    /// `d` first type, `a` second type.
    Cvt,
    /// Loads and stores: the value operand is the instruction type, one address operand.
    Mem,
    /// Branch or call targets.
    Control,
    /// `bfe d, a, b, c`: `d, a` instruction type, `b, c` .u32 (position and length).
    Bfe,
    /// `bfi f, a, b, c, d`: `f, a, b` instruction type, `c, d` .u32.
    Bfi,
    /// `clz`/`popc`/`bfind d, a`: `d` .u32 whatever the width of `a`, `a` instruction type.
    Count,
    /// `testp.op.type p, a`: `p` predicate, `a` instruction type.
    Testp,
    /// `vote.mode.type d, {!}a{, membermask}`: `d` instruction type (.pred or .b32), `a`
    /// predicate, `membermask` .u32.
    Vote,
    /// `shfl.mode.b32 d{|p}, a, b, c{, membermask}`: `d, a` instruction type, `p` predicate,
    /// `b, c, membermask` .u32.
    Shfl,
    /// `isspacep.space p, a`: `p` predicate; `a` an address (no instruction type).
    Isspacep,
    /// `slct.dtype.ctype d, a, b, c`: `d, a, b` first type, `c` second type.
    Slct,
    /// `dp4a`/`dp2a d, a, b, c`: every operand a 32-bit register.
    Dp,
    /// `bar.sync a{, b}` / `bar.arrive a, b`: `a, b` .u32; `bar.red.op.type d, a{, b}, {!}c`:
    /// `d` instruction type, `a, b` .u32, `c` predicate.
    Bar,
    /// Video instructions `vop.dtype.atype.btype d, a, b{, c}`: `d` and `c` the first type,
    /// `a` the second, `b` the third.
    Video,
    /// Operands are not type-checked: textures and surfaces (opaque handles and coordinate
    /// vectors), the sm_80+ matrix, bulk-copy and mbarrier families, `alloca`/`stacksave`,
    /// `match`, cache hints, and opcodes without operands.
    Free,
}

pub struct OpInfo {
    pub name: &'static str,
    pub types: u32,
    pub spaces: bool,
    pub cmp: bool,
    pub round: bool,
    pub vec: bool,
    /// Any modifier word accepted (open-ended opcode families).
    pub open: bool,
    pub flags: &'static [&'static str],
    pub min_ops: u8,
    pub max_ops: u8,
    pub rule: Rule,
}

macro_rules! opcodes {
    ($( $v:ident $name:literal [$types:expr; $sp:literal $cm:literal $rd:literal $vc:literal $op:literal] [$($f:literal)*] $lo:literal $hi:literal $rule:ident ;)*) => {
        /// A PTX opcode (the word before the first dot).
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Opcode { $($v),* }

        pub static TABLE: &[OpInfo] = &[
            $(OpInfo {
                name: $name,
                types: $types,
                spaces: $sp == 1,
                cmp: $cm == 1,
                round: $rd == 1,
                vec: $vc == 1,
                open: $op == 1,
                flags: &[$($f),*],
                min_ops: $lo,
                max_ops: $hi,
                rule: Rule::$rule,
            }),*
        ];

        const ALL_OPCODES: &[Opcode] = &[$(Opcode::$v),*];

        fn lookup(s: &str) -> Option<Opcode> {
            match s {
                $($name => Some(Opcode::$v),)*
                _ => None,
            }
        }
    };
}

use tc::*;

// Columns: variant, name, [types; spaces cmp round vec open], [other modifier words],
// min operands, max operands, typing rule.
opcodes! {
    Abs "abs" [I | F | H; 0 0 0 0 0] ["ftz" "relu"] 2 2 Same;
    Activemask "activemask" [B; 0 0 0 0 0] [] 1 1 Same;
    Add "add" [BIS | F | H; 0 0 1 0 0] ["ftz" "sat" "cc" "relu" "oob"] 3 3 Same;
    Addc "addc" [BIS; 0 0 0 0 0] ["cc"] 3 3 Same;
    Alloca "alloca" [U; 0 0 0 0 0] [] 2 3 Free;
    And "and" [B | PRED; 0 0 0 0 0] [] 3 3 Same;
    Applypriority "applypriority" [B; 1 0 0 0 0] ["L2" "evict_normal" "L2::evict_normal"] 2 2 Free;
    Atom "atom" [ALL; 1 0 0 1 0] ["and" "or" "xor" "cas" "exch" "add" "inc" "dec" "min" "max" "noftz" "relaxed" "acquire" "release" "acq_rel" "sc" "cta" "gpu" "sys" "cluster" "L2::cache_hint" "mmio"] 3 5 Mem;
    Bar "bar" [U | B | PRED; 0 0 0 0 0] ["sync" "arrive" "red" "popc" "and" "or" "aligned" "warp" "cta"] 0 4 Bar;
    Barrier "barrier" [U | B | PRED; 0 0 0 0 0] ["sync" "arrive" "red" "popc" "and" "or" "aligned" "cta" "cluster" "wait" "relaxed" "acquire" "release"] 0 4 Bar;
    Bfe "bfe" [I | B; 0 0 0 0 0] [] 4 4 Bfe;
    Bfi "bfi" [B; 0 0 0 0 0] [] 5 5 Bfi;
    Bfind "bfind" [I; 0 0 0 0 0] ["shiftamt"] 2 2 Count;
    Bmsk "bmsk" [B; 0 0 0 0 0] ["clamp" "wrap"] 3 3 Same;
    Bra "bra" [0; 0 0 0 0 0] ["uni"] 1 1 Control;
    Brev "brev" [B; 0 0 0 0 0] [] 2 2 Same;
    Brkpt "brkpt" [0; 0 0 0 0 0] [] 0 0 Free;
    Brx "brx" [0; 0 0 0 0 0] ["idx" "uni"] 2 2 Control;
    Call "call" [0; 0 0 0 0 0] ["uni"] 1 4 Control;
    Clz "clz" [B; 0 0 0 0 0] [] 2 2 Count;
    Cnot "cnot" [B; 0 0 0 0 0] [] 2 2 Same;
    Copysign "copysign" [F; 0 0 0 0 0] [] 3 3 Same;
    Cos "cos" [F32; 0 0 0 0 0] ["approx" "ftz"] 2 2 Same;
    Cp "cp" [ALL; 1 0 0 0 1] [] 0 8 Free;
    Createpolicy "createpolicy" [B; 0 0 0 0 1] [] 2 4 Free;
    Cvt "cvt" [ALL; 0 0 1 0 0] ["ftz" "sat" "relu" "satfinite" "pack"] 2 4 Cvt;
    Cvta "cvta" [U; 1 0 0 0 0] ["to"] 2 2 Same;
    Discard "discard" [0; 1 0 0 0 1] [] 2 2 Free;
    Div "div" [I | F; 0 0 1 0 0] ["approx" "full" "ftz"] 3 3 Same;
    Dp2a "dp2a" [I; 0 0 0 0 0] ["lo" "hi"] 4 4 Dp;
    Dp4a "dp4a" [I; 0 0 0 0 0] [] 4 4 Dp;
    Elect "elect" [0; 0 0 0 0 0] ["sync"] 2 2 Free;
    Ex2 "ex2" [F32 | H; 0 0 0 0 0] ["approx" "ftz" "full"] 2 2 Same;
    Exit "exit" [0; 0 0 0 0 0] [] 0 0 Free;
    Fence "fence" [0; 0 0 0 0 1] [] 0 2 Free;
    Fma "fma" [F | H; 0 0 1 0 0] ["ftz" "sat" "relu" "oob"] 4 4 Same;
    Fns "fns" [B; 0 0 0 0 0] [] 4 4 Same;
    Getctarank "getctarank" [U | B; 1 0 0 0 0] [] 2 2 Free;
    Griddepcontrol "griddepcontrol" [0; 0 0 0 0 0] ["launch_dependents" "wait"] 0 0 Free;
    Isspacep "isspacep" [0; 1 0 0 0 0] [] 2 2 Isspacep;
    Istypep "istypep" [OPAQUE; 0 0 0 0 0] [] 2 2 Free;
    Ld "ld" [ALL; 1 0 0 1 0] ["ca" "cg" "cs" "lu" "cv" "volatile" "relaxed" "acquire" "weak" "mmio" "cta" "gpu" "sys" "cluster" "nc" "L1::evict_normal" "L1::evict_unchanged" "L1::evict_first" "L1::evict_last" "L1::no_allocate" "L2::evict_first" "L2::evict_last" "L2::cache_hint" "L2::64B" "L2::128B" "L2::256B" "unified"] 2 3 Mem;
    Ldmatrix "ldmatrix" [B; 1 0 0 0 1] [] 2 2 Free;
    Ldu "ldu" [ALL; 1 0 0 1 0] [] 2 2 Mem;
    Lg2 "lg2" [F32; 0 0 0 0 0] ["approx" "ftz" "full"] 2 2 Same;
    Lop3 "lop3" [B; 0 0 0 0 0] [] 5 5 Same;
    Mad "mad" [I | F | H; 0 0 1 0 0] ["lo" "hi" "wide" "sat" "ftz" "cc"] 4 4 Same;
    Mad24 "mad24" [I; 0 0 0 0 0] ["lo" "hi" "sat"] 4 4 Same;
    Madc "madc" [I; 0 0 0 0 0] ["lo" "hi" "cc"] 4 4 Same;
    Mapa "mapa" [U; 1 0 0 0 0] [] 3 3 Free;
    Match "match" [B; 0 0 0 0 0] ["any" "all" "sync"] 3 4 Free;
    Max "max" [I | F | H | B; 0 0 0 0 0] ["ftz" "NaN" "xorsign" "abs" "relu"] 3 4 Same;
    Mbarrier "mbarrier" [B; 1 0 0 0 1] [] 1 4 Free;
    Membar "membar" [0; 0 0 0 0 0] ["cta" "gl" "sys" "proxy" "alias"] 0 0 Free;
    Min "min" [I | F | H | B; 0 0 0 0 0] ["ftz" "NaN" "xorsign" "abs" "relu"] 3 4 Same;
    Mma "mma" [ALL; 0 0 1 0 1] [] 4 6 Free;
    Mov "mov" [B | I | F | H | PRED | B128; 0 0 0 1 0] [] 2 2 Same;
    Movmatrix "movmatrix" [B; 0 0 0 0 1] [] 2 2 Free;
    Mul "mul" [I | F | H | B; 0 0 1 0 0] ["lo" "hi" "wide" "ftz" "sat"] 3 3 Same;
    Mul24 "mul24" [I; 0 0 0 0 0] ["lo" "hi"] 3 3 Same;
    Multimem "multimem" [ALL; 1 0 0 1 1] [] 2 3 Free;
    Nanosleep "nanosleep" [U; 0 0 0 0 0] [] 1 1 Same;
    Neg "neg" [S | F | H; 0 0 0 0 0] ["ftz" "relu"] 2 2 Same;
    Not "not" [B | PRED; 0 0 0 0 0] [] 2 2 Same;
    Or "or" [B | PRED; 0 0 0 0 0] [] 3 3 Same;
    Pmevent "pmevent" [0; 0 0 0 0 0] ["mask"] 1 1 Free;
    Popc "popc" [B; 0 0 0 0 0] [] 2 2 Count;
    Prefetch "prefetch" [0; 1 0 0 0 1] [] 1 1 Free;
    Prefetchu "prefetchu" [0; 0 0 0 0 0] ["L1"] 1 1 Free;
    Prmt "prmt" [B; 0 0 0 0 0] ["f4e" "b4e" "rc8" "ecl" "ecr" "rc16"] 4 4 Same;
    Rcp "rcp" [F; 0 0 1 0 0] ["approx" "ftz"] 2 2 Same;
    Red "red" [ALL; 1 0 0 1 0] ["and" "or" "xor" "add" "inc" "dec" "min" "max" "noftz" "relaxed" "release" "cta" "gpu" "sys" "cluster" "L2::cache_hint" "mmio"] 2 3 Mem;
    Redux "redux" [I | B | F32; 0 0 0 0 0] ["sync" "add" "min" "max" "and" "or" "xor" "abs" "NaN"] 3 3 Shift;
    Rem "rem" [I; 0 0 0 0 0] [] 3 3 Same;
    Ret "ret" [0; 0 0 0 0 0] ["uni"] 0 0 Free;
    Rsqrt "rsqrt" [F; 0 0 0 0 0] ["approx" "ftz"] 2 2 Same;
    Sad "sad" [I; 0 0 0 0 0] [] 4 4 Same;
    Selp "selp" [B | I | F | H; 0 0 0 0 0] [] 4 4 Selp;
    Set "set" [ALL; 0 1 0 0 0] ["and" "or" "xor" "ftz"] 3 4 Set;
    Setmaxnreg "setmaxnreg" [U; 0 0 0 0 0] ["inc" "dec" "sync" "aligned"] 1 1 Free;
    Setp "setp" [ALL; 0 1 0 0 0] ["and" "or" "xor" "ftz"] 3 4 Setp;
    Shf "shf" [B; 0 0 0 0 0] ["l" "r" "clamp" "wrap"] 4 4 Same;
    Shfl "shfl" [B; 0 0 0 0 0] ["up" "down" "bfly" "idx" "sync"] 4 5 Shfl;
    Shl "shl" [B; 0 0 0 0 0] [] 3 3 Shift;
    Shr "shr" [B | I; 0 0 0 0 0] [] 3 3 Shift;
    Sin "sin" [F32; 0 0 0 0 0] ["approx" "ftz"] 2 2 Same;
    Slct "slct" [ALL; 0 0 0 0 0] ["ftz"] 4 4 Slct;
    Sqrt "sqrt" [F; 0 0 1 0 0] ["approx" "ftz"] 2 2 Same;
    St "st" [ALL; 1 0 0 1 0] ["wb" "cg" "cs" "wt" "volatile" "relaxed" "release" "weak" "mmio" "cta" "gpu" "sys" "cluster" "L1::evict_normal" "L1::evict_unchanged" "L1::evict_first" "L1::evict_last" "L1::no_allocate" "L2::evict_first" "L2::evict_last" "L2::cache_hint"] 2 3 Mem;
    Stackrestore "stackrestore" [U; 0 0 0 0 0] [] 1 1 Free;
    Stacksave "stacksave" [U; 0 0 0 0 0] [] 1 1 Free;
    Stmatrix "stmatrix" [B; 1 0 0 0 1] [] 2 2 Free;
    Sub "sub" [BIS | F | H; 0 0 1 0 0] ["ftz" "sat" "cc" "relu" "oob"] 3 3 Same;
    Subc "subc" [BIS; 0 0 0 0 0] ["cc"] 3 3 Same;
    Suld "suld" [ALL; 0 0 0 1 0] ["b" "p" "1d" "2d" "3d" "a1d" "a2d" "trap" "clamp" "zero" "ca" "cg" "cs" "cv"] 2 2 Free;
    Suq "suq" [B; 0 0 0 0 0] ["width" "height" "depth" "channel_data_type" "channel_order" "array_size" "memory_layout"] 2 2 Free;
    Sured "sured" [ALL; 0 0 0 0 0] ["b" "p" "add" "min" "max" "and" "or" "1d" "2d" "3d" "trap" "clamp" "zero"] 2 2 Free;
    Sust "sust" [ALL; 0 0 0 1 0] ["b" "p" "1d" "2d" "3d" "a1d" "a2d" "trap" "clamp" "zero" "wb" "cg" "cs" "wt"] 2 2 Free;
    Szext "szext" [I; 0 0 0 0 0] ["clamp" "wrap"] 3 3 Shift;
    Tanh "tanh" [F32 | H; 0 0 0 0 0] ["approx"] 2 2 Same;
    Testp "testp" [F; 0 0 0 0 0] ["finite" "infinite" "number" "notanumber" "normal" "subnormal"] 2 2 Testp;
    Tex "tex" [ALL; 0 0 0 1 0] ["1d" "2d" "3d" "a1d" "a2d" "cube" "acube" "2dms" "a2dms" "base" "level" "grad" "clamp" "ftz"] 2 6 Free;
    Tld4 "tld4" [ALL; 0 0 0 1 0] ["r" "g" "b" "a" "2d" "a2d" "cube" "acube"] 2 4 Free;
    Trap "trap" [0; 0 0 0 0 0] [] 0 0 Free;
    Txq "txq" [B; 0 0 0 0 0] ["width" "height" "depth" "channel_data_type" "channel_order" "normalized_coords" "filter_mode" "addr_mode_0" "addr_mode_1" "addr_mode_2" "samplerref" "texref" "array_size" "num_mipmap_levels" "num_samples" "force_unnormalized_coords" "level"] 2 3 Free;
    Vabsdiff "vabsdiff" [I; 0 0 0 0 0] ["sat" "add" "min" "max" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vabsdiff2 "vabsdiff2" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vabsdiff4 "vabsdiff4" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vadd "vadd" [I; 0 0 0 0 0] ["sat" "add" "min" "max" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vadd2 "vadd2" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vadd4 "vadd4" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vavrg2 "vavrg2" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vavrg4 "vavrg4" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vmad "vmad" [I; 0 0 0 0 0] ["sat" "po" "shr7" "shr15"] 4 4 Video;
    Vmax "vmax" [I; 0 0 0 0 0] ["sat" "add" "min" "max" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vmax2 "vmax2" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vmax4 "vmax4" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vmin "vmin" [I; 0 0 0 0 0] ["sat" "add" "min" "max" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vmin2 "vmin2" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vmin4 "vmin4" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vote "vote" [B | PRED; 0 0 0 0 0] ["all" "any" "uni" "ballot" "sync"] 2 3 Vote;
    Vset "vset" [I; 0 1 0 0 0] ["add" "min" "max" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vset2 "vset2" [I; 0 1 0 0 0] ["add"] 3 4 Video;
    Vset4 "vset4" [I; 0 1 0 0 0] ["add"] 3 4 Video;
    Vshl "vshl" [I; 0 0 0 0 0] ["sat" "add" "min" "max" "clamp" "wrap" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vshr "vshr" [I; 0 0 0 0 0] ["sat" "add" "min" "max" "clamp" "wrap" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vsub "vsub" [I; 0 0 0 0 0] ["sat" "add" "min" "max" "b0" "b1" "b2" "b3" "h0" "h1"] 3 4 Video;
    Vsub2 "vsub2" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Vsub4 "vsub4" [I; 0 0 0 0 0] ["sat" "add"] 3 4 Video;
    Wgmma "wgmma" [ALL; 0 0 0 0 1] [] 0 8 Free;
    Wmma "wmma" [ALL; 1 0 0 0 1] [] 2 5 Free;
    Xor "xor" [B | PRED; 0 0 0 0 0] [] 3 3 Same;
    Tensormap "tensormap" [ALL; 1 0 0 0 1] [] 1 3 Free;
}

impl Opcode {
    pub fn from_name(s: &str) -> Option<Opcode> {
        lookup(s)
    }

    pub fn name(self) -> &'static str {
        TABLE[self as usize].name
    }

    pub fn info(self) -> &'static OpInfo {
        &TABLE[self as usize]
    }

    pub fn all() -> &'static [Opcode] {
        ALL_OPCODES
    }
}

impl OpInfo {
    /// Whether this opcode accepts a type modifier of type `t`.
    pub fn allows_type(&self, t: crate::ptx::ast::Type) -> bool {
        use crate::ptx::ast::Type::*;
        let class = match t {
            B8 | B16 | B32 | B64 => B,
            B128 => tc::B128,
            U8 | U16 | U32 | U64 => U,
            S8 | S16 | S32 | S64 => S,
            F32 => tc::F32,
            F64 => tc::F64,
            F16 | F16x2 | Bf16 | Bf16x2 => H,
            Pred => PRED,
            Tf32 | E4m3 | E5m2 | E4m3x2 | E5m2x2 => F8,
            TexRef | SamplerRef | SurfRef => OPAQUE,
        };
        self.types & class != 0
    }

    /// The static spelling of an allowed flag word, if allowed.
    pub fn flag(&self, word: &str) -> Option<&'static str> {
        self.flags.iter().copied().find(|f| *f == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_match_enum_order_and_names_are_unique() {
        for (i, op) in Opcode::all().iter().enumerate() {
            assert_eq!(*op as usize, i);
            assert_eq!(Opcode::from_name(op.name()), Some(*op));
        }
        let mut names: Vec<_> = TABLE.iter().map(|r| r.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
    }

    #[test]
    fn unknown_opcode_is_none() {
        assert_eq!(Opcode::from_name("frobnicate"), None);
        assert_eq!(Opcode::from_name(""), None);
    }
}
