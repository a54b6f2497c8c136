//! Extended-precision carry chains: `add.cc` / `addc.cc` / `addc` over (shifted) words, found
//! in the IR so that selection can emit them as one `LEA` + `LEA.HI.X` links (seed 001's U128
//! example: `LEA d0.CC, w0, a0, s; LEA.HI.X d1.CC, w0, a1, w1, s; ...; LEA.HI.X dn, ...`).
//!
//! In: a verified [`Function`]. Out: the [`CarryChain`]s of each block, each a list of links
//! `d_k = a_k + x_k + carry_{k-1}` where the offset words `x_k` are the words of a multiword
//! value `W` shifted left by `s` (`x_0 = w_0 << s`, `x_k = (w_k << s) | (w_{k-1} >> (32 - s))`),
//! or the words themselves when `s = 0`.
//!
//! The IR has no carry flag: `ir::build` models the carry of `add.cc` as `icmp.ult d, a` and
//! `addc` as `t = a + b; d = t + select(cin, 1, 0)` with carry out `(t <u a) | (d <u t)`. This
//! module matches exactly that shape (operands of the adds and of `or` in either order; a
//! carry test may compare with either addend, both are the carry out of a two-term sum).
//!
//! Invariants: the chain computes exactly the results `d_k` (LEA.HI.X's `({Rc,Ra} << s) >> 32`
//! is `(w_k << s) | (w_{k-1} >> (32 - s))`); every leaf (`a_k`, `w_k`) is defined before the
//! first link's add (or outside the block), so the chain can be emitted where its first result
//! is lowered. Intermediate values (the carry predicates, `t_k`, the shifted words) are not
//! replaced: a user outside the chain still gets them from ordinary lowering.

use cranelift_entity::{EntityRef, SecondaryMap};

use crate::ir::{BinaryOp, Function, Inst, InstData, IntCC, Type, Value, ValueDef};

/// One word of the sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The unshifted addend word `a_k` (LEA's `B`).
    pub base: Value,
    /// The word `w_k` of the shifted operand (LEA's `Ra` for this link and `Rc` for the next).
    pub word: Value,
    /// The result `d_k`.
    pub result: Value,
}

/// `sum_k (a_k + x_k) · 2^(32k)` over at least two links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarryChain {
    pub shift: u8,
    pub links: Vec<Link>,
}

struct Finder<'a> {
    f: &'a Function,
    /// The users of value `v` (an instruction once per operand naming `v`, in layout order)
    /// are `users[first[v]..first[v + 1]]`: one list for the function, not a vector per value.
    first: Vec<u32>,
    users: Vec<Inst>,
    /// Position of each instruction in its block.
    pos: SecondaryMap<Inst, usize>,
}

impl Finder<'_> {
    /// Every instruction that reads `v`, in layout order.
    fn users_of(&self, v: Value) -> &[Inst] {
        &self.users[self.first[v.index()] as usize..self.first[v.index() + 1] as usize]
    }
}

/// The carry chains of `f`, each with at least two links.
pub fn find_chains(f: &Function) -> Vec<CarryChain> {
    // Every chain's first link turns its carry into a word with `select c, 1, 0`: a function
    // without any `select` has no chain, and most have none (no need for the use lists).
    let any_select = f.layout.iter().any(|&b| {
        f.blocks[b]
            .insts
            .iter()
            .any(|&i| matches!(f.insts[i].data, InstData::Select { .. }))
    });
    if !any_select {
        return Vec::new();
    }
    // Counted first, then filled in the same order.
    let mut first = vec![0u32; f.values.len() + 1];
    let mut pos: SecondaryMap<Inst, usize> = SecondaryMap::with_capacity(f.insts.len());
    for &b in &f.layout {
        for (k, &i) in f.blocks[b].insts.iter().enumerate() {
            pos[i] = k;
            for part in f.insts[i].data.operand_parts() {
                for &v in part {
                    first[v.index() + 1] += 1;
                }
            }
        }
    }
    for k in 1..first.len() {
        first[k] += first[k - 1];
    }
    let mut fill = first.clone();
    let mut users = vec![Inst::new(0); first[f.values.len()] as usize];
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            for part in f.insts[i].data.operand_parts() {
                for &v in part {
                    users[fill[v.index()] as usize] = i;
                    fill[v.index()] += 1;
                }
            }
        }
    }
    let fd = Finder {
        f,
        first,
        users,
        pos,
    };
    let mut out = Vec::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            if let Some(c) = fd.chain_from(i) {
                out.push(c);
            }
        }
    }
    out
}

impl Finder<'_> {
    fn data(&self, v: Value) -> Option<&InstData> {
        match self.f.values[v].def {
            ValueDef::Result(i, _) => Some(&self.f.insts[i].data),
            ValueDef::Param(..) => None,
        }
    }

    fn inst_of(&self, v: Value) -> Option<Inst> {
        match self.f.values[v].def {
            ValueDef::Result(i, _) => Some(i),
            ValueDef::Param(..) => None,
        }
    }

    fn result(&self, i: Inst) -> Option<Value> {
        self.f.insts[i].results.first().copied()
    }

    fn iconst(&self, v: Value) -> Option<u64> {
        match self.data(v)? {
            InstData::Iconst { imm, .. } => Some(*imm & 0xffff_ffff),
            _ => None,
        }
    }

    fn is_add32(&self, v: Value) -> Option<[Value; 2]> {
        if self.f.value_type(v) != Type::I32 {
            return None;
        }
        match self.data(v)? {
            InstData::Binary {
                op: BinaryOp::Add,
                args,
            } => Some(*args),
            _ => None,
        }
    }

    /// A user of `v` that is `icmp.ult v, other` for `other` in `others`.
    fn carry_test(&self, v: Value, others: &[Value]) -> Option<Value> {
        self.users_of(v)
            .iter()
            .find_map(|&u| match self.f.insts[u].data {
                InstData::Icmp {
                    cc: IntCC::Ult,
                    args: [x, y],
                } if x == v && others.contains(&y) => self.result(u),
                _ => None,
            })
    }

    /// A user of the predicate `c` that is `select c, 1, 0` (i32).
    fn carry_word(&self, c: Value) -> Option<Value> {
        self.users_of(c)
            .iter()
            .find_map(|&u| match self.f.insts[u].data {
                InstData::Select {
                    cond,
                    args: [one, zero],
                } if cond == c
                    && self.iconst(one) == Some(1)
                    && self.iconst(zero) == Some(0)
                    && self.result(u).map(|r| self.f.value_type(r)) == Some(Type::I32) =>
                {
                    self.result(u)
                }
                _ => None,
            })
    }

    /// `x = w << s` (constant `s` in 1..32): `(w, s)`.
    fn shl_const(&self, x: Value) -> Option<(Value, u8)> {
        match self.data(x)? {
            InstData::Binary {
                op: BinaryOp::Shl,
                args: [w, k],
            } => {
                let k = self.iconst(*k)?;
                (1..32).contains(&k).then_some((*w, k as u8))
            }
            _ => None,
        }
    }

    /// `x = (w << s) | (prev >> (32 - s))`: `w`.
    fn funnel(&self, x: Value, s: u8, prev: Value) -> Option<Value> {
        let InstData::Binary {
            op: BinaryOp::Or,
            args,
        } = self.data(x)?
        else {
            return None;
        };
        for [hi, lo] in [[args[0], args[1]], [args[1], args[0]]] {
            let Some((w, k)) = self.shl_const(hi) else {
                continue;
            };
            if k != s {
                continue;
            }
            if let Some(InstData::Binary {
                op: BinaryOp::ShrU,
                args: [p, r],
            }) = self.data(lo)
            {
                if *p == prev && self.iconst(*r) == Some(u64::from(32 - s)) {
                    return Some(w);
                }
            }
        }
        None
    }

    /// The chain whose first link is the add `i` (None when there is none, or it has one
    /// link only).
    fn chain_from(&self, i: Inst) -> Option<CarryChain> {
        let d0 = self.result(i)?;
        let [p, q] = self.is_add32(d0)?;
        // Link 0: `d0 = a0 + x0` with `icmp.ult d0, a0|x0` and `select` of it.
        let c0 = self.carry_test(d0, &[p, q])?;
        let mut carry = self.carry_word(c0)?;
        // Which addend is the shifted word: a `shl` by a constant, else (s = 0) the second.
        let (base, word, shift) = match (self.shl_const(q), self.shl_const(p)) {
            (Some((w, s)), _) => (p, w, s),
            (None, Some((w, s))) => (q, w, s),
            _ => (p, q, 0),
        };
        let block = self.f.insts[i].block;
        let start = self.pos[i];
        let mut links = vec![Link {
            base,
            word,
            result: d0,
        }];
        loop {
            let prev = links.last().map(|l| l.word)?;
            let Some((link, next)) = self.link(carry, shift, prev) else {
                break;
            };
            links.push(link);
            match next {
                Some(c) => carry = c,
                None => break,
            }
        }
        if links.len() < 2 {
            return None;
        }
        // Every leaf must be available where the chain is emitted (the first link).
        let early = |v: Value| match self.inst_of(v) {
            Some(d) => self.f.insts[d].block != block || self.pos[d] < start,
            None => true,
        };
        if !links.iter().all(|l| early(l.base) && early(l.word)) {
            return None;
        }
        Some(CarryChain { shift, links })
    }

    /// The link consuming the carry word `cw`: `t = a + x; d = t + cw`, and its carry word out
    /// if it has one.
    fn link(&self, cw: Value, s: u8, prev: Value) -> Option<(Link, Option<Value>)> {
        for &u in self.users_of(cw) {
            let Some(d) = self.result(u) else { continue };
            let Some([x, y]) = self.is_add32(d) else {
                continue;
            };
            let t = if y == cw {
                x
            } else if x == cw {
                y
            } else {
                continue;
            };
            let Some([p, q]) = self.is_add32(t) else {
                continue;
            };
            let pick = |a: Value, x: Value| -> Option<(Value, Value)> {
                if s == 0 {
                    Some((a, x))
                } else {
                    self.funnel(x, s, prev).map(|w| (a, w))
                }
            };
            let Some((base, word)) = pick(p, q).or_else(|| pick(q, p)) else {
                continue;
            };
            // Carry out: `(t <u a|x) | (d <u t)`.
            let next = (|| {
                let c1 = self.carry_test(t, &[p, q])?;
                let c2 = self.carry_test(d, &[t])?;
                let or = self
                    .users_of(c1)
                    .iter()
                    .find_map(|&o| match self.f.insts[o].data {
                        InstData::Binary {
                            op: BinaryOp::Or,
                            args,
                        } if (args == [c1, c2] || args == [c2, c1]) => self.result(o),
                        _ => None,
                    })?;
                self.carry_word(or)
            })();
            return Some((
                Link {
                    base,
                    word,
                    result: d,
                },
                next,
            ));
        }
        None
    }
}
