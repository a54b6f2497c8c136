//! The warp-level matrix instructions of sm_75/sm_80 on sm_5x (issue 26, the stretch):
//! `ldmatrix`, `mma.sync` and `wmma`, as warp-cooperative sequences of shuffles, loads and scalar
//! arithmetic.
//!
//! In: one checked `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared{::cta}.b16` or
//! `mma.sync.aligned.{shape}.row.col.{dtype}.{atype}.{btype}.{ctype}` or `wmma.*`. Out: existing IR
//! operations only (`shfl.idx`, shared loads, f16→f32 conversions, f32 `fma`, the integer
//! byte products of `dp4a`), so `ir::eval`, selection and the simulator need nothing new; the
//! tests (`tests/compile_emulate.rs`) compare `ir::eval` of each expansion with a Rust
//! transcription of the PTX ISA's definition (the fragment layouts of its figures), and the
//! simulator with `ir::eval`.
//!
//! Fragments (PTX ISA, "Matrix fragments for mma.m16n8k*"): lane `l` has `g = l >> 2` (the
//! group) and `t = l & 3` (the thread in the group).
//! * f16 `A` (`.row`): register `j` holds two halves of row `g` or `g + 8`, columns
//!   `kb + 2t + {0, 1}` (`m16n8k8`: `a0` row `g`, `a1` row `g + 8`, `kb = 0`; `m16n8k16`
//!   adds `a2`, `a3` at `kb = 8`). `B` (`.col`): register `j` holds rows `kb + 2t + {0,1}`
//!   of column `g`. `C`/`D` `.f32`: `c0, c1` row `g`, columns `2t, 2t + 1`; `c2, c3` row
//!   `g + 8`. `C`/`D` `.f16`: `c0` packs row `g`'s two, `c1` row `g + 8`'s.
//! * `.s8/.u8` `A`: register `j` holds four bytes of row `g` or `g + 8`, columns
//!   `kb + 4t + {0..3}` (`m8n8k16`: `a0` only, rows `g`; `m16n8k16`: `a0, a1`; `m16n8k32`:
//!   `a0..a3`, `kb = 16` for `a2, a3`); `B` likewise by rows of column `g`; `C`/`D` `.s32`
//!   as the f32 ones (`m8n8k16`: `c0, c1` only).
//!
//! So the lane computing output `(r, c)` needs row `r` of `A` — held by the four lanes of
//! its own group, `4g + t'` — and column `c ∈ {2t, 2t + 1}` of `B`, held by lanes
//! `4c + t'`: one `shfl.idx` per source register and source lane, with the source lane and
//! the element positions known at compile time. Then, for f16, each half is widened to f32
//! (exact) and the products are accumulated with f32 `fma` in ascending `k`, starting from
//! `C` (f16 `C` widened, f16 `D` rounded to nearest at the end); the product of two halves
//! is exact in f32, so each `fma` rounds once, as an add would. The PTX ISA leaves the order
//! and the precision of the accumulation to the implementation; this is the order.
//! Integer products are summed with `dp4a`'s byte products (wrapping, as `mma` without
//! `.satfinite`). `.satfinite`, other layouts (`.row.row`), other types (`.bf16`, `.tf32`,
//! `.f64`, sub-byte, `.e4m3`) and shapes are refused with a located error.
//!
//! `ldmatrix`: lane `l` receives, for matrix `i`, the 32-bit pair of row `l >> 2`, columns
//! `2(l & 3) + {0, 1}` (with `.trans` the same of the transposed matrix); row `r` of matrix
//! `i` starts at the address lane `8i + r` gives. So a row address is one `shfl.idx` of the
//! address and the pair one 32-bit shared load; with `.trans` the pair is two 16-bit loads
//! (rows `2(l & 3)` and `2(l & 3) + 1`, column `l >> 2`) from two shuffled addresses.
//!
//! `wmma` (`load.{a,b,c}`, `store.d`, `mma`; m16n16k16, f16 `A`/`B`, f16 or f32 `C`/`D`,
//! `.row`/`.col`, `.global`/`.shared`/generic, an optional stride): PTX leaves the layout
//! of a wmma fragment unspecified, so this module picks the cheapest one. Lane `l` holds
//! line `l & 15`: the whole row of `A` (8 registers, 16 halves), the whole column of `B`,
//! and row `l & 15`, columns `8(l >> 4) + 0..8` of `C`/`D` (8 f32, or 4 `.f16x2`). Loads
//! and stores are then each lane's own scalar accesses, with no shuffle (an immediate
//! offset per element when the line is contiguous in memory, an added stride otherwise);
//! `wmma.mma` uses its own row of `A` and shuffles in the 8 columns of `B` it needs (64
//! `SHFL`s), then accumulates in f32 as `mma` does. Fragments are only meaningful to
//! `wmma` itself, which is all PTX promises.
//!
//! Divergence: all three are `.aligned`; the ISA requires every thread of the warp to execute the
//! same instruction, and leaves anything else undefined. The expansion's shuffles read
//! other lanes, so a call with lanes missing reads lanes that take no part: `ir::eval`
//! refuses such a launch (`shfl` from a non-participating lane is undefined), which is the
//! safe answer for an undefined program.
//!
//! Cost (SASS instructions on sm_50 and sm_53 alike, the kernel minus the same kernel
//! without the instruction; README's emulation table): `ldmatrix` `.x1` 12, `.x4` 24,
//! `.x4.trans` 60; f16 `mma` m16n8k8 102, m16n8k16 192 (32 `SHFL`, 64 `F2F`, 64 `FFMA`;
//! f16 C and D 204); integer m8n8k16 144, m16n8k16 228, m16n8k32 516 (the byte products:
//! `BFE`, `XMAD`, `IADD` per k); `wmma.mma` 360 (64 `SHFL`, 144 `F2F`, 128 `FFMA`),
//! `wmma.load.a` 66, `wmma.load.c` 30. A tensor core does one of these per warp in a few
//! cycles; here every lane pays for its four (or eight) outputs in full, so these are for
//! running the code at all, not fast. The f16 shapes keep many widened halves live and may
//! spill a few registers (m16n8k16: 3 `STL`).
//!

use super::FnBuilder;
use crate::ir::float::{FloatFmt, FloatOp, Round};
use crate::ir::{BinaryOp, ShflMode, Space, SpecialReg, Type, Value};
use crate::ptx::ast::{self, Instruction, Operand, TypeKind};

/// One `mma` shape: `A`'s registers (row `g` or `g + 8`: 0 or 1, and `kb`), `B`'s (`kb`),
/// `K`, how many rows of `C` a lane holds (1 or 2), and the elements per register (2 halves
/// or 4 bytes).
struct Shape {
    a: &'static [(usize, usize)],
    b: &'static [usize],
    k: usize,
    rows: usize,
    per_reg: usize,
}

const F16_M16N8K8: Shape = Shape {
    a: &[(0, 0), (1, 0)],
    b: &[0],
    k: 8,
    rows: 2,
    per_reg: 2,
};
const F16_M16N8K16: Shape = Shape {
    a: &[(0, 0), (1, 0), (0, 8), (1, 8)],
    b: &[0, 8],
    k: 16,
    rows: 2,
    per_reg: 2,
};
const I8_M8N8K16: Shape = Shape {
    a: &[(0, 0)],
    b: &[0],
    k: 16,
    rows: 1,
    per_reg: 4,
};
const I8_M16N8K16: Shape = Shape {
    a: &[(0, 0), (1, 0)],
    b: &[0],
    k: 16,
    rows: 2,
    per_reg: 4,
};
const I8_M16N8K32: Shape = Shape {
    a: &[(0, 0), (1, 0), (0, 16), (1, 16)],
    b: &[0, 16],
    k: 32,
    rows: 2,
    per_reg: 4,
};

impl FnBuilder<'_, '_> {
    /// The items of a `{..}` operand (a single operand is a vector of one).
    fn vector_items(op: &Operand) -> Vec<&Operand> {
        match op {
            Operand::Vector(items, _) => items.iter().collect(),
            other => vec![other],
        }
    }

    /// Read each `.b32` register of a vector operand.
    fn read_b32s(&mut self, op: &Operand) -> Option<Vec<Value>> {
        Self::vector_items(op)
            .into_iter()
            .map(|o| self.read(o, Type::I32, Some(ast::Type::B32)))
            .collect()
    }

    /// Write `vals` to the registers of a vector operand.
    fn write_b32s(&mut self, op: &Operand, vals: &[Value]) -> Option<()> {
        let dests = self.dests(op)?;
        for (d, &v) in dests.iter().zip(vals) {
            self.write(*d, v, false, op.span())?;
        }
        Some(())
    }

    /// `x` from lane `src` of the warp (`shfl.sync.idx`, all lanes).
    fn lane_value(&mut self, x: Value, src: Value) -> Value {
        let c = self.ins().iconst(Type::I32, 0x1f);
        self.ins().shfl(ShflMode::Idx, x, src, c).0
    }

    /// `(lane & mask) * mul + add` as an `i32` (a source lane or an offset).
    fn lane_expr(&mut self, lane: Value, shift: i64, mask: i64, mul: i64, add: i64) -> Value {
        let sh = self.ins().iconst(Type::I32, shift);
        let x = self.ins().binary(BinaryOp::ShrU, lane, sh);
        let m = self.ins().iconst(Type::I32, mask);
        let x = self.ins().binary(BinaryOp::And, x, m);
        let k = self.ins().iconst(Type::I32, mul);
        let x = self.ins().mul(x, k);
        let a = self.ins().iconst(Type::I32, add);
        self.ins().add(x, a)
    }

    /// `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared{::cta}.b16 d, [addr]` (module
    /// essay).
    pub(super) fn ldmatrix(&mut self, ins: &Instruction) -> Option<()> {
        let has = |w: &str| super::emulate::has_word(ins, w) || ins.has_flag(w);
        if !has("m8n8") {
            return self.unsupported(ins, "only the .m8n8 ldmatrix shape is emulated on sm_5x");
        }
        let n = match (has("x1"), has("x2"), has("x4")) {
            (true, false, false) => 1,
            (false, true, false) => 2,
            (false, false, true) => 4,
            _ => return self.unsupported(ins, "ldmatrix needs one of .x1, .x2, .x4"),
        };
        let space_ok = matches!(ins.space(), Some(ast::StateSpace::Shared) | None);
        if !space_ok || has("shared::cluster") {
            return self.unsupported(ins, "ldmatrix reads .shared (CTA) memory");
        }
        let ops = self.ops(ins, 2)?;
        if Self::vector_items(&ops[0]).len() != n {
            return self.unsupported(ins, &format!("ldmatrix .x{n} writes {n} registers"));
        }
        let (base, off) = self.address(&ops[1], Space::Shared)?;
        let base = if self.func.values[base].ty == Type::I64 {
            self.ins().trunc(Type::I32, base)
        } else {
            base
        };
        let off = self.ins().iconst(Type::I32, i64::from(off));
        let addr = self.ins().add(base, off);
        let lane = self.ins().special_reg(SpecialReg::LaneId);
        let trans = has("trans");
        let mut out = Vec::new();
        for i in 0..n as i64 {
            let d = if !trans {
                // Row l >> 2 of matrix i, bytes 4(l & 3)...
                let src = self.lane_expr(lane, 2, 7, 1, 8 * i);
                let row = self.lane_value(addr, src);
                let col = self.lane_expr(lane, 0, 3, 4, 0);
                let at = self.ins().add(row, col);
                self.ins().load1(Space::Shared, Type::I32, at, 0)
            } else {
                // Rows 2(l & 3) and 2(l & 3) + 1 of matrix i, column l >> 2 of each.
                let col = self.lane_expr(lane, 2, 7, 2, 0);
                let mut halves = Vec::new();
                for h in 0..2 {
                    let src = self.lane_expr(lane, 0, 3, 2, 8 * i + h);
                    let row = self.lane_value(addr, src);
                    let at = self.ins().add(row, col);
                    halves.push(self.ins().load1(Space::Shared, Type::I16, at, 0));
                }
                self.pack_halves(halves[0], halves[1])
            };
            out.push(d);
        }
        self.write_b32s(&ops[0], &out)
    }

    /// `mma.sync.aligned.{shape}.row.col.{d}.{a}.{b}.{c} d, a, b, c` (module essay). The
    /// steps: check the form and pick its shape, read the fragments, gather the rows of `A`
    /// and the columns of `B` this lane needs, multiply and accumulate, write `D`.
    pub(super) fn mma(&mut self, ins: &Instruction) -> Option<()> {
        let has = |w: &str| super::emulate::has_word(ins, w) || ins.has_flag(w);
        if !(has("row") && has("col")) {
            return self.unsupported(ins, "only .row.col mma is emulated on sm_5x");
        }
        if has("satfinite") {
            return self.unsupported(ins, "mma .satfinite is not emulated on sm_5x");
        }
        let types = ins.type_mod_list();
        let [dt, at, bt, ct] = types[..] else {
            return self.unsupported(ins, "mma takes .dtype.atype.btype.ctype");
        };
        use ast::Type as T;
        let Some(shape) = mma_shape(at, bt, has) else {
            return self.unsupported(
                ins,
                "this mma shape or type is not emulated on sm_5x (f16 m16n8k8/m16n8k16, \
                 .s8/.u8 m8n8k16/m16n8k16/m16n8k32 are)",
            );
        };
        let half = shape.per_reg == 2;
        let acc_ok = |t: T| {
            if half {
                matches!(t, T::F16 | T::F32)
            } else {
                t == T::S32
            }
        };
        if !(acc_ok(dt) && acc_ok(ct)) {
            return self.unsupported(ins, "mma accumulators: .f16/.f32 for f16, .s32 for s8/u8");
        }
        let ops = self.ops(ins, 4)?;
        let c_regs = |t: T| match t {
            T::F16 => shape.rows,
            _ => 2 * shape.rows,
        };
        let want = [c_regs(dt), shape.a.len(), shape.b.len(), c_regs(ct)];
        for (op, n) in ops.iter().zip(want) {
            if Self::vector_items(op).len() != n {
                return self.unsupported(ins, "mma: wrong number of fragment registers");
            }
        }
        let a = self.read_b32s(&ops[1])?;
        let b = self.read_b32s(&ops[2])?;
        let c = self.read_b32s(&ops[3])?;
        let (fa, fb) = self.mma_gather(&a, &b);
        let out = if half {
            self.mma_f16(shape, &fa, &fb, &c, dt == T::F32, ct == T::F32)?
        } else {
            let (sa, sb) = (at.kind() == TypeKind::Signed, bt.kind() == TypeKind::Signed);
            self.mma_int(shape, &fa, &fb, &c, sa, sb)
        };
        self.write_b32s(&ops[0], &out)
    }

    /// The registers of `A` and `B` this lane needs, shuffled in: `fa[t'][j]`, `A` register
    /// `j` of lane `4g + t'`; `fb[cs][t'][j]`, `B` register `j` of lane `4(2t + cs) + t'`.
    fn mma_gather(&mut self, a: &[Value], b: &[Value]) -> (Vec<Vec<Value>>, BColumns) {
        let lane = self.ins().special_reg(SpecialReg::LaneId);
        let mut fa = Vec::new();
        for tp in 0..4 {
            let src = self.lane_expr(lane, 2, 7, 4, tp);
            let regs: Vec<Value> = a.iter().map(|&x| self.lane_value(x, src)).collect();
            fa.push(regs);
        }
        let mut fb = Vec::new();
        for cs in 0..2 {
            let mut per = Vec::new();
            for tp in 0..4 {
                let src = self.lane_expr(lane, 0, 3, 8, 4 * cs + tp);
                let regs: Vec<Value> = b.iter().map(|&x| self.lane_value(x, src)).collect();
                per.push(regs);
            }
            fb.push(per);
        }
        (fa, fb)
    }

    /// The f16 products: each half of `A` and `B` widened to f32 once, `C` widened unless
    /// `c_f32`, f32 `fma` in ascending `k` from `C`, `D` narrowed (to nearest) unless `d_f32`.
    fn mma_f16(
        &mut self,
        shape: &Shape,
        fa: &[Vec<Value>],
        fb: &BColumns,
        c: &[Value],
        d_f32: bool,
        c_f32: bool,
    ) -> Option<Vec<Value>> {
        let fma = FloatOp::Fma {
            fmt: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        // Each half widened once.
        let mut a_f = vec![vec![None; shape.k]; shape.rows];
        for (row, a_row) in a_f.iter_mut().enumerate() {
            for (k, slot) in a_row.iter_mut().enumerate() {
                let kbs: Vec<usize> = shape
                    .a
                    .iter()
                    .map(|&(r, kb)| if r == row { kb } else { usize::MAX })
                    .collect();
                let (tp, j, e) = find_row(&kbs, k, shape.per_reg);
                *slot = Some(self.widen_half(fa[tp][j], e));
            }
        }
        let mut b_f = vec![vec![None; shape.k]; 2];
        for (cs, b_col) in b_f.iter_mut().enumerate() {
            for (k, slot) in b_col.iter_mut().enumerate() {
                let (tp, j, e) = find_row(shape.b, k, shape.per_reg);
                *slot = Some(self.widen_half(fb[cs][tp][j], e));
            }
        }
        // C as f32, in the order (row, column).
        let mut cf = Vec::new();
        for &x in c {
            if c_f32 {
                cf.push(x);
            } else {
                cf.push(self.widen_half(x, 0));
                cf.push(self.widen_half(x, 1));
            }
        }
        let mut d = Vec::new();
        for row in 0..shape.rows {
            for cs in 0..2 {
                let mut acc = cf[2 * row + cs];
                for k in 0..shape.k {
                    acc = self.ins().float(fma, &[a_f[row][k]?, b_f[cs][k]?, acc]);
                }
                d.push(acc);
            }
        }
        if d_f32 {
            return Some(d);
        }
        Some(self.narrow_pairs(&d))
    }

    /// The integer products: for each output, `C` plus the byte products (`dp4a`'s, `sa`/`sb`
    /// signed) of each register of `B` with the register of `A` at the same `kb`, from the
    /// four lanes of the group, wrapping.
    fn mma_int(
        &mut self,
        shape: &Shape,
        fa: &[Vec<Value>],
        fb: &BColumns,
        c: &[Value],
        sa: bool,
        sb: bool,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        for row in 0..shape.rows {
            for cs in 0..2 {
                let mut acc = c[2 * row + cs];
                for (jb, &kb) in shape.b.iter().enumerate() {
                    let ja = shape
                        .a
                        .iter()
                        .position(|&(r, k)| r == row && k == kb)
                        .unwrap_or(0);
                    for tp in 0..4 {
                        acc = self.dp4(fa[tp][ja], fb[cs][tp][jb], acc, sa, sb);
                    }
                }
                out.push(acc);
            }
        }
        out
    }
}

/// `B` fragments by column half, lane and register (`fb[cs][t'][j]`, [`FnBuilder::mma_gather`]).
type BColumns = Vec<Vec<Vec<Value>>>;

/// The shape of an `mma` with `A` and `B` of types `at`, `bt` and the modifiers `has` finds;
/// `None` for one not emulated.
fn mma_shape(at: ast::Type, bt: ast::Type, has: impl Fn(&str) -> bool) -> Option<&'static Shape> {
    use ast::Type as T;
    let int8 = |t: T| matches!(t, T::S8 | T::U8);
    Some(match (at, bt) {
        (T::F16, T::F16) if has("m16n8k8") => &F16_M16N8K8,
        (T::F16, T::F16) if has("m16n8k16") => &F16_M16N8K16,
        (a, b) if int8(a) && int8(b) && has("m8n8k16") => &I8_M8N8K16,
        (a, b) if int8(a) && int8(b) && has("m16n8k16") => &I8_M16N8K16,
        (a, b) if int8(a) && int8(b) && has("m16n8k32") => &I8_M16N8K32,
        _ => return None,
    })
}

/// The lane `t'`, register and element holding `k`, for registers starting at `kbs[j]`
/// (`k = kb + per_reg · t' + e`); registers that do not apply carry `usize::MAX`.
fn find_row(kbs: &[usize], k: usize, per_reg: usize) -> (usize, usize, usize) {
    let j = (0..kbs.len())
        .filter(|&j| kbs[j] <= k)
        .max_by_key(|&j| kbs[j])
        .unwrap_or(0);
    let r = k - kbs[j];
    (r / per_reg, j, r % per_reg)
}

/// `wmma` fragments (module essay, "wmma"): which matrix a load or store names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WmmaPart {
    A,
    B,
    C,
}

impl FnBuilder<'_, '_> {
    /// `wmma.{load,store,mma}.sync.aligned.*.m16n16k16.*` (module essay, "wmma").
    pub(super) fn wmma(&mut self, ins: &Instruction) -> Option<()> {
        let has = |w: &str| super::emulate::has_word(ins, w) || ins.has_flag(w);
        if !has("m16n16k16") {
            return self.unsupported(ins, "only the m16n16k16 wmma shape is emulated on sm_5x");
        }
        let types = ins.type_mod_list();
        use ast::Type as T;
        if has("mma") {
            let [dt, ct] = types[..] else {
                return self.unsupported(ins, "wmma.mma on f16 takes .dtype.ctype (.f16/.f32)");
            };
            if !matches!(dt, T::F16 | T::F32) || !matches!(ct, T::F16 | T::F32) {
                return self.unsupported(ins, "wmma.mma on f16 takes .dtype.ctype (.f16/.f32)");
            }
            if has("satfinite") {
                return self.unsupported(ins, "wmma.mma .satfinite is not emulated on sm_5x");
            }
            return self.wmma_mma(ins, dt == T::F16, ct == T::F16);
        }
        let load = has("load");
        if !load && !has("store") {
            return self.unsupported(ins, "wmma: load, store or mma");
        }
        let part = match (has("a"), has("b"), has("c") || has("d")) {
            (true, false, false) => WmmaPart::A,
            (false, true, false) => WmmaPart::B,
            (false, false, true) => WmmaPart::C,
            _ => return self.unsupported(ins, "wmma.load/store names one of .a, .b, .c, .d"),
        };
        let row = match (has("row"), has("col")) {
            (true, false) => true,
            (false, true) => false,
            _ => return self.unsupported(ins, "wmma.load/store takes .row or .col"),
        };
        let half = match types[..] {
            [T::F16] => true,
            [T::F32] if part == WmmaPart::C => false,
            _ => {
                return self.unsupported(ins, "wmma on sm_5x: .f16 A/B, .f16 or .f32 C/D fragments")
            }
        };
        let space = match ins.space() {
            Some(ast::StateSpace::Global) => Space::Global,
            Some(ast::StateSpace::Shared) => Space::Shared,
            None => Space::Generic,
            Some(_) => return self.unsupported(ins, "wmma reads .global, .shared or generic"),
        };
        let n = ins.operands.len();
        if !(2..=3).contains(&n) {
            return self.unsupported(ins, "wmma.load/store: fragment, [addr]{, stride}");
        }
        let ops = ins.operands.clone();
        let (frag, at) = if load {
            (&ops[0], &ops[1])
        } else {
            (&ops[1], &ops[0])
        };
        let regs = if part != WmmaPart::C || !half { 8 } else { 4 };
        if Self::vector_items(frag).len() != regs {
            return self.unsupported(ins, &format!("this wmma fragment has {regs} registers"));
        }
        let (base, off) = self.address(at, space)?;
        let ldm = match ops.get(2) {
            Some(s) => self.read(s, Type::I32, Some(ast::Type::U32))?,
            None => self.ins().iconst(Type::I32, 16),
        };
        // Lane l holds line l & 15: a row of A, a column of B, half a row of C/D (columns
        // 8(l >> 4)..); element e of it is at (i, j) = (line, e), (e, line) or (line, 8h + e).
        let lane = self.ins().special_reg(SpecialReg::LaneId);
        let line = self.lane_expr(lane, 0, 15, 1, 0);
        let hcol = self.lane_expr(lane, 4, 1, 8, 0);
        let elems = if part == WmmaPart::C { 8 } else { 16 };
        // The element runs along i for B, along j for A and C. In memory (i, j) is at
        // i·ldm + j (.row) or j·ldm + i (.col): the run is contiguous when it is along the
        // fast index, else a stride of ldm.
        let along_i = part == WmmaPart::B;
        let (i0, j0) = match part {
            WmmaPart::A => (line, self.ins().iconst(Type::I32, 0)),
            WmmaPart::B => (self.ins().iconst(Type::I32, 0), line),
            WmmaPart::C => (line, hcol),
        };
        let (slow, fast) = if row { (i0, j0) } else { (j0, i0) };
        let start = self.ins().mad_lo(slow, ldm, fast);
        let size: i64 = if half { 2 } else { 4 };
        let contiguous = along_i != row;
        let ty_addr = self.func.values[base].ty;
        let scaled = |this: &mut Self, x: Value| {
            let s = this.ins().iconst(Type::I32, size);
            let x = this.ins().mul(x, s);
            if ty_addr == Type::I64 {
                this.ins().zext(Type::I64, x)
            } else {
                x
            }
        };
        let first = scaled(self, start);
        let first = self.ins().add(base, first);
        let stride = scaled(self, ldm);
        let elem_ty = if half { Type::I16 } else { Type::I32 };
        // (address, immediate offset) of element e.
        let mut addrs = Vec::new();
        let mut cur = first;
        for e in 0..elems {
            if contiguous {
                addrs.push((first, off + e * size as i32));
            } else {
                if e > 0 {
                    cur = self.ins().add(cur, stride);
                }
                addrs.push((cur, off));
            }
        }
        if load {
            let vals: Vec<Value> = addrs
                .iter()
                .map(|&(a, o)| self.ins().load1(space, elem_ty, a, o))
                .collect();
            let out: Vec<Value> = if half {
                vals.chunks(2)
                    .map(|p| self.pack_halves(p[0], p[1]))
                    .collect()
            } else {
                vals
            };
            self.write_b32s(frag, &out)
        } else {
            let vals = self.read_b32s(frag)?;
            let mut elems_v = Vec::new();
            for &v in &vals {
                if half {
                    let sixteen = self.ins().iconst(Type::I32, 16);
                    let hi = self.ins().binary(BinaryOp::ShrU, v, sixteen);
                    elems_v.push(self.ins().trunc(Type::I16, v));
                    elems_v.push(self.ins().trunc(Type::I16, hi));
                } else {
                    elems_v.push(v);
                }
            }
            for (&(a, o), &v) in addrs.iter().zip(&elems_v) {
                self.ins().store(space, a, o, &[v]);
            }
            Some(())
        }
    }

    /// Two 16-bit values (`i16`) as one `.b32`, the first in the low half.
    fn pack_halves(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.ins().zext(Type::I32, lo);
        let hi = self.ins().zext(Type::I32, hi);
        let sixteen = self.ins().iconst(Type::I32, 16);
        let hi = self.ins().shl(hi, sixteen);
        self.ins().binary(BinaryOp::Or, lo, hi)
    }

    /// `wmma.mma.sync.aligned.{alayout}.{blayout}.m16n16k16.{dtype}.{ctype} d, a, b, c` on
    /// this module's fragments: lane l computes row l & 15, columns 8(l >> 4) + 0..8, from its
    /// own row of A and the columns of B that lanes 8(l >> 4) + 0..8 hold (64 shuffles).
    fn wmma_mma(&mut self, ins: &Instruction, d16: bool, c16: bool) -> Option<()> {
        let ops = self.ops(ins, 4)?;
        let want = [if d16 { 4 } else { 8 }, 8, 8, if c16 { 4 } else { 8 }];
        for (op, n) in ops.iter().zip(want) {
            if Self::vector_items(op).len() != n {
                return self.unsupported(ins, "wmma.mma: wrong number of fragment registers");
            }
        }
        let a = self.read_b32s(&ops[1])?;
        let b = self.read_b32s(&ops[2])?;
        let c = self.read_b32s(&ops[3])?;
        let lane = self.ins().special_reg(SpecialReg::LaneId);
        let a_f: Vec<Value> = (0..16).map(|k| self.widen_half(a[k / 2], k % 2)).collect();
        let mut c_f = Vec::new();
        for &x in &c {
            if c16 {
                c_f.push(self.widen_half(x, 0));
                c_f.push(self.widen_half(x, 1));
            } else {
                c_f.push(x);
            }
        }
        let fma = FloatOp::Fma {
            fmt: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let mut d = Vec::new();
        for (nn, &cv) in c_f.iter().enumerate() {
            let src = self.lane_expr(lane, 4, 1, 8, nn as i64);
            let col: Vec<Value> = b.iter().map(|&x| self.lane_value(x, src)).collect();
            let mut acc = cv;
            for k in 0..16 {
                let y = self.widen_half(col[k / 2], k % 2);
                acc = self.ins().float(fma, &[a_f[k], y, acc]);
            }
            d.push(acc);
        }
        let out: Vec<Value> = if d16 { self.narrow_pairs(&d) } else { d };
        self.write_b32s(&ops[0], &out)
    }

    /// f32 values as `.f16x2` registers: each pair rounded to nearest and packed (the
    /// first in the low half).
    fn narrow_pairs(&mut self, d: &[Value]) -> Vec<Value> {
        let narrow = FloatOp::Convert {
            from: FloatFmt::F32,
            to: FloatFmt::F16,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        d.chunks(2)
            .map(|p| {
                let lo = self.ins().float(narrow, &[p[0]]);
                let hi = self.ins().float(narrow, &[p[1]]);
                self.pack_halves(lo, hi)
            })
            .collect()
    }

    /// Half `e` (0: bits 0..16) of `x` as f32 (exact).
    fn widen_half(&mut self, x: Value, e: usize) -> Value {
        let x = if e == 1 {
            let sixteen = self.ins().iconst(Type::I32, 16);
            self.ins().binary(BinaryOp::ShrU, x, sixteen)
        } else {
            x
        };
        let h = self.ins().trunc(Type::I16, x);
        let widen = FloatOp::Convert {
            from: FloatFmt::F16,
            to: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        self.ins().float(widen, &[h])
    }
}
