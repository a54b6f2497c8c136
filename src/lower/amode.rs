//! Address matching: an IR address expression as `base + (index << scale) + displacement`.
//!
//! In: the address operand of a load or store, its byte offset, and whether the access uses
//! 64-bit (`.E`, generic/global) or 32-bit (shared, local, const, 32-bit generic) arithmetic.
//! Out: an [`AddrMode`] whose *leaves* (the base and index values) are the only values the
//! access needs in registers; everything between the leaves and the access is folded away
//! (into the LEA chain of [`super::lea`] or the memory instruction's immediate).
//!
//! Matching is a fixed sequence of rule phases, highest priority first, one function per
//! family (`fold_displacement`, `use_existing_value`, `split_base_index`, `match_index`,
//! `match_base`). Each function says why it exists and why it sits where it does.
//!
//! A `.local` variable's address is absolute, `R1 + offset` (select's `lower_local_address`,
//! as ptxas 11.8 makes it): in a `.local` access it folds once, where the address adds it, as
//! R1 for the base ([`AddrMode::sp`]) and its offset for the displacement (`arr + x` is then
//! `R1 + (x << 0)`); when a base of its own remains besides an index, the variable's address
//! is a leaf in a register like any other. A constant `.local` address is absolute too
//! (ptxas: `ld.local [8]` is `LDL [0x8]`).
//!
//! Invariants: the mode computes exactly the address the IR computes, modulo 2^64 for wide
//! and 2^32 for narrow accesses (a narrow access truncates its address, seed 6.4.1, so wrapping
//! 32-bit arithmetic on the low words is exact); `Index::shift` < 32 (the LEA scale field is
//! 5 bits); an index with `ext` other than `None` is an i32 value inside a wide address.
//! Matching reads only the IR, never what lowering has emitted, so the demand analysis in
//! `select` and the emission agree on the leaves.

use std::cell::Cell;

use crate::ir::{BinaryOp, ConvOp, CvtaDir, Function, InstData, Space, Type, Value, ValueDef};

/// How an index is widened into a 64-bit address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ext {
    /// The index has the address's own width.
    None,
    /// An i32 index, zero-extended: the high word of the offset is `RZ`.
    Zext,
    /// An i32 index, sign-extended: the high word is its sign word (`SHR s, i, 0x1f`).
    Sext,
}

/// The scaled part of an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Index {
    pub value: Value,
    pub ext: Ext,
    /// Left shift, 0..=31.
    pub shift: u8,
    /// The index is subtracted (`base - (index << shift)`): LEA's `-Ra`.
    pub neg: bool,
}

/// The unscaled part of an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// No base: the address is the index (and displacement) alone.
    None,
    /// A value in a register (pair for wide addresses).
    Reg(Value),
    /// A kernel parameter (the `param` instruction's value and its offset), read straight
    /// from the constant bank by the chain: `c[0x0][0x140 + offset]`, no `MOV`. A user that
    /// cannot take a constant operand asks for `value` in a register instead.
    Param { value: Value, offset: u32 },
}

/// `base + (index << shift) + disp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddrMode {
    /// 64-bit address arithmetic.
    pub wide: bool,
    pub base: Base,
    pub index: Option<Index>,
    pub disp: i64,
    /// The address includes the stack pointer R1 once: a `.local` variable's address
    /// (`R1 + offset`, [`Facts::frame`]) was folded, its offset into `disp`. Only with no
    /// base of its own (R1 is then the base: `[R1 + disp]` or a chain on R1).
    pub sp: bool,
}

impl AddrMode {
    /// The values the access needs in registers.
    pub fn leaves(&self) -> impl Iterator<Item = Value> {
        let b = match self.base {
            Base::Reg(v) => Some(v),
            _ => None,
        };
        b.into_iter().chain(self.index.map(|i| i.value))
    }
}

/// What the matcher needs to know beyond the IR's shape.
pub struct Facts<'a> {
    /// Whether a value will be in a register anyway (it has a use outside address arithmetic).
    pub in_register: &'a dyn Fn(Value) -> bool,
    /// A value that is a link-time constant (the offset of a `.shared`/`.const` variable).
    pub constant: &'a dyn Fn(Value) -> Option<i64>,
    /// The offset of a `.local` variable whose address a value is: that address is absolute,
    /// `R1 + offset`, so it folds (once, added) as R1 for the base and the offset for the
    /// displacement. `None` everywhere but in `.local` accesses.
    pub frame: &'a dyn Fn(Value) -> Option<i64>,
}

/// Match the address of an access (see the module essay). With `reuse_root` false the root
/// itself is never taken as an existing register (used to compute the root's own value).
pub fn match_address(
    f: &Function,
    addr: Value,
    offset: i32,
    wide: bool,
    facts: &Facts,
    reuse_root: bool,
) -> AddrMode {
    let mut mode = match_with(f, addr, offset, wide, facts, true, reuse_root);
    match (mode.sp, mode.base, mode.index) {
        // `arr + x` with `x` in a register: R1 the base, `x` the index (ptxas:
        // `IADD R5, R1, R2`).
        (true, Base::Reg(x), None) => {
            mode.base = Base::None;
            mode.index = Some(Index {
                value: x,
                ext: Ext::None,
                shift: 0,
                neg: false,
            });
            mode
        }
        // R1 and a base of its own (besides an index, or a parameter): the `.local` address
        // is then a register (`R1 + offset`) like any other leaf.
        (true, Base::Reg(_), Some(_)) | (true, Base::Param { .. }, _) => {
            match_with(f, addr, offset, wide, facts, false, reuse_root)
        }
        _ => mode,
    }
}

/// The value an access's address is built on once its displacement is peeled off
/// ([`Matcher::fold_displacement`], with the same constants as [`match_address`]), or `None`
/// when the whole address is a constant. Accesses whose addresses share a root differ only
/// in their displacement: one register holding the root serves them all (`[root + disp]`).
pub fn address_root(
    f: &Function,
    addr: Value,
    wide: bool,
    constant: &dyn Fn(Value) -> Option<i64>,
) -> Option<Value> {
    let none = |_: Value| None;
    let m = Matcher {
        f,
        wide,
        known: constant,
        frame: &none,
        sp: Cell::new(false),
    };
    let root = m.fold_displacement(addr, &mut 0, true);
    m.added(root).is_none().then_some(root)
}

fn match_with(
    f: &Function,
    addr: Value,
    offset: i32,
    wide: bool,
    facts: &Facts,
    frames: bool,
    reuse_root: bool,
) -> AddrMode {
    let in_register = facts.in_register;
    let none = |_: Value| None;
    let m = Matcher {
        f,
        wide,
        known: facts.constant,
        frame: if frames { facts.frame } else { &none },
        sp: Cell::new(false),
    };
    let mut disp = i64::from(offset);
    let root = m.fold_displacement(addr, &mut disp, true);
    let mut mode = AddrMode {
        wide,
        base: Base::None,
        index: None,
        disp,
        sp: false,
    };
    if let Some(k) = m.added(root) {
        // Phase 0 of the base: a constant address (shared/const variables) is pure
        // displacement.
        mode.disp = mode.disp.wrapping_add(k);
        return m.normalize(mode);
    }
    if reuse_root && m.use_existing_value(root, in_register) {
        mode.base = Base::Reg(root);
        return m.normalize(mode);
    }
    match m.split_base_index(root, &mut mode.disp) {
        Some((base, index)) => {
            mode.base = base;
            mode.index = Some(index);
        }
        // No base at all: a scaled index alone (`smem + (tid << 2)` once the variable's
        // offset went into the displacement) is still one LEA with `RZ` as the base.
        None => match m.match_index(root, &mut mode.disp, false) {
            Some(ix) => mode.index = Some(ix),
            None => mode.base = m.match_base(root, &mut mode.disp),
        },
    }
    m.normalize(mode)
}

struct Matcher<'f> {
    f: &'f Function,
    wide: bool,
    known: &'f dyn Fn(Value) -> Option<i64>,
    frame: &'f dyn Fn(Value) -> Option<i64>,
    /// Whether a `.local` variable's address (R1) was folded already.
    sp: Cell<bool>,
}

impl Matcher<'_> {
    fn def(&self, v: Value) -> Option<&InstData> {
        match self.f.values.get(v)?.def {
            ValueDef::Result(i, 0) => Some(&self.f.insts[i].data),
            _ => None,
        }
    }

    fn ty(&self, v: Value) -> Type {
        self.f.value_type(v)
    }

    /// An integer constant, sign-extended from its type, or a known variable offset.
    fn constant(&self, v: Value) -> Option<i64> {
        if let Some(k) = (self.known)(v) {
            return Some(k);
        }
        match self.def(v)? {
            InstData::Iconst { ty, imm } => {
                let bits = ty.bits();
                Some(((imm << (64 - bits)) as i64) >> (64 - bits))
            }
            _ => None,
        }
    }

    /// A constant, or (once) a `.local` variable's offset, where the address adds it: the
    /// displacement takes it and, for the latter, R1 joins as the base ([`AddrMode::sp`]).
    fn added(&self, v: Value) -> Option<i64> {
        if let Some(k) = self.constant(v) {
            return Some(k);
        }
        let k = (self.frame)(v).filter(|_| !self.sp.get())?;
        self.sp.set(true);
        Some(k)
    }

    /// The shift a constant multiplier stands for, if it is a power of two below 2^32.
    fn pow2(&self, v: Value) -> Option<u8> {
        let k = self.constant(v)?;
        (k > 0 && (k as u64).is_power_of_two() && k.trailing_zeros() < 32)
            .then(|| k.trailing_zeros() as u8)
    }

    /// Look through operations that do not change the address: `cvta.to.global` and
    /// `cvta.global` (global addresses are generic addresses, seed 6.4.1.1).
    fn strip_identity(&self, mut v: Value) -> Value {
        while let Some(InstData::Cvta {
            space: Space::Global,
            arg,
            dir: CvtaDir::FromGeneric | CvtaDir::ToGeneric,
            ..
        }) = self.def(v)
        {
            v = *arg;
        }
        v
    }

    /// Rule family 1, highest priority: constants added or subtracted anywhere on the spine of
    /// the address become displacement. Why first: a displacement is free in every memory
    /// encoding (imm24/imm32) and in a chain's imm20, so it must never cost a register or an
    /// instruction, and peeling it first exposes the `base + index` shape under it.
    /// `added`: whether the spine is added to the address as it is (not scaled inside an
    /// index), so that a `.local` variable's address may fold there as R1 + offset.
    fn fold_displacement(&self, v: Value, disp: &mut i64, added: bool) -> Value {
        let v = self.strip_identity(v);
        let konst = |x: Value| {
            if added {
                self.added(x)
            } else {
                self.constant(x)
            }
        };
        if let Some(InstData::Binary { op, args }) = self.def(v) {
            let (a, b) = (args[0], args[1]);
            match op {
                BinaryOp::Add => {
                    if let Some(k) = konst(b) {
                        *disp = disp.wrapping_add(k);
                        return self.fold_displacement(a, disp, added);
                    }
                    if let Some(k) = konst(a) {
                        *disp = disp.wrapping_add(k);
                        return self.fold_displacement(b, disp, added);
                    }
                }
                BinaryOp::Sub => {
                    if let Some(k) = self.constant(b) {
                        *disp = disp.wrapping_sub(k);
                        return self.fold_displacement(a, disp, added);
                    }
                }
                _ => {}
            }
        }
        v
    }

    /// Rule family 2: a value that is in a register anyway is used as the base as it is.
    /// Why before index matching: re-deriving it through a chain would compute the same sum a
    /// second time (the chain only pays when its inputs would otherwise be materialized).
    fn use_existing_value(&self, v: Value, in_register: &dyn Fn(Value) -> bool) -> bool {
        in_register(v)
    }

    /// Rule family 3: `a + b` / `a - b` where one side is a (scaled, extended) index. Why
    /// here: it is what LEA exists for; one `LEA` (or `LEA.CC` + `LEA.HI.X`) computes the
    /// whole sum including the shift and the extension. The right operand is tried as the
    /// index first (PTX writes `add base, offset`), then the left one. A sum with no visible
    /// scaling still becomes `base + (b << 0)`: one chain instead of an add pair.
    fn split_base_index(&self, v: Value, disp: &mut i64) -> Option<(Base, Index)> {
        let InstData::Binary { op, args } = self.def(v)? else {
            return None;
        };
        let (a, b) = (args[0], args[1]);
        match op {
            BinaryOp::Add => {
                let (base, index) = if let Some(ix) = self.match_index(b, disp, false) {
                    (a, ix)
                } else if let Some(ix) = self.match_index(a, disp, false) {
                    (b, ix)
                } else {
                    (a, self.plain_index(b))
                };
                Some((self.match_base(base, disp), index))
            }
            BinaryOp::Sub => {
                let ix = self.match_index(b, disp, true).unwrap_or_else(|| Index {
                    neg: true,
                    ..self.plain_index(b)
                });
                Some((self.match_base(a, disp), ix))
            }
            _ => None,
        }
    }

    fn plain_index(&self, v: Value) -> Index {
        Index {
            value: v,
            ext: Ext::None,
            shift: 0,
            neg: false,
        }
    }

    /// Rule family 4: the index shapes: `shl x, k`, `mul x, 2^k`, `mulwide x, 2^k` (PTX
    /// `mul.wide.s32 %rd, %r, 8`), and `sext`/`zext` of an i32 under any of them. A constant
    /// added inside a same-width index is distributed into the displacement
    /// (`(i + c) << k = (i << k) + (c << k)` holds modulo the width, never across an
    /// extension, where it would not). Returns `None` for anything that is not visibly an
    /// index, so the caller can try the other operand.
    fn match_index(&self, v: Value, disp: &mut i64, neg: bool) -> Option<Index> {
        let scaled = |x: Value, shift: u8, ext: Ext| Index {
            value: x,
            ext,
            shift,
            neg,
        };
        match self.def(v)? {
            InstData::Binary {
                op: BinaryOp::Shl,
                args,
            } => {
                let k = self.constant(args[1])?;
                if !(0..32).contains(&k) {
                    return None;
                }
                let (x, ext) = self.extension(args[0]);
                let (x, ext) = self.distribute(x, ext, k as u8, neg, disp);
                Some(scaled(x, k as u8, ext))
            }
            InstData::Binary {
                op: BinaryOp::Mul,
                args,
            } => {
                let (x, k) = match (self.pow2(args[1]), self.pow2(args[0])) {
                    (Some(k), _) => (args[0], k),
                    (None, Some(k)) => (args[1], k),
                    _ => return None,
                };
                let (x, ext) = self.extension(x);
                let (x, ext) = self.distribute(x, ext, k, neg, disp);
                Some(scaled(x, k, ext))
            }
            InstData::MulWide { signed, args } if self.ty(v) == Type::I64 => {
                let (x, k) = match (self.pow2(args[1]), self.pow2(args[0])) {
                    (Some(k), _) => (args[0], k),
                    (None, Some(k)) => (args[1], k),
                    _ => return None,
                };
                // In a narrow address only the low word counts: `x << k` itself.
                let ext = match (self.wide, signed) {
                    (false, _) => Ext::None,
                    (true, true) => Ext::Sext,
                    (true, false) => Ext::Zext,
                };
                Some(scaled(x, k, ext))
            }
            InstData::Convert { .. } => {
                let (x, ext) = self.extension(v);
                (x != v).then(|| scaled(x, 0, ext))
            }
            _ => None,
        }
    }

    /// `sext.i64 x` / `zext.i64 x` of an i32 `x`. Inside a wide address it becomes the
    /// index's extension; inside a narrow one only the low word counts, which is `x` itself.
    fn extension(&self, v: Value) -> (Value, Ext) {
        if !self.wide {
            if let Some(InstData::Convert {
                op: ConvOp::Sext | ConvOp::Zext,
                ty: Type::I64,
                arg,
            }) = self.def(v)
            {
                if self.ty(*arg) == Type::I32 {
                    return (*arg, Ext::None);
                }
            }
        } else {
            if let Some(InstData::Convert {
                op,
                ty: Type::I64,
                arg,
            }) = self.def(v)
            {
                if self.ty(*arg) == Type::I32 {
                    match op {
                        ConvOp::Sext => return (*arg, Ext::Sext),
                        ConvOp::Zext => return (*arg, Ext::Zext),
                        ConvOp::Trunc => {}
                    }
                }
            }
        }
        (v, Ext::None)
    }

    /// Move `c << shift` out of an index `x + c` into the displacement (same width only).
    /// What is left may itself be an extension (`(sext(i) + 1) << 2`), which is then matched.
    fn distribute(&self, x: Value, ext: Ext, shift: u8, neg: bool, disp: &mut i64) -> (Value, Ext) {
        if ext != Ext::None {
            return (x, ext);
        }
        let mut c = 0i64;
        let inner = self.fold_displacement(x, &mut c, false);
        if c == 0 {
            return (x, ext);
        }
        let scaled = c.wrapping_shl(u32::from(shift));
        *disp = if neg {
            disp.wrapping_sub(scaled)
        } else {
            disp.wrapping_add(scaled)
        };
        self.extension(inner)
    }

    /// Rule family 5, last: the base. A kernel parameter is read from the constant bank by
    /// the LEA itself (no `MOV`); constants become displacement; anything else is a register.
    fn match_base(&self, v: Value, disp: &mut i64) -> Base {
        let v = self.fold_displacement(v, disp, true);
        if let Some(k) = self.added(v) {
            *disp = disp.wrapping_add(k);
            return Base::None;
        }
        let want = if self.wide { Type::I64 } else { Type::I32 };
        match self.def(v) {
            // (A subroutine's parameters are argument registers, not constant-bank words.)
            Some(InstData::LoadParam { ty, offset }) if *ty == want && !self.f.subroutine => {
                Base::Param {
                    value: v,
                    offset: *offset,
                }
            }
            _ => Base::Reg(v),
        }
    }

    /// Wrap the displacement to the address width (a narrow access truncates its address);
    /// note whether R1 was folded.
    fn normalize(&self, mut m: AddrMode) -> AddrMode {
        m.sp = self.sp.get();
        if !self.wide {
            m.disp = i64::from(m.disp as i32);
        }
        m
    }
}
