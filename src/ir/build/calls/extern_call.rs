//! Calls that stay calls: system functions (`vprintf`, `malloc`, `free`, `__assertfail`) and
//! recursive subroutines, under the sm_50 call ABI (docs/calls.md): [`ExternSig`] says which
//! registers each parameter and the result take, and [`FnBuilder::extern_call`] reads the
//! argument stores into them and makes an [`crate::ir::InstData::ExternCall`].
//!
//! In: a `call` the expander left in place, with its signature. Out: the call instruction and
//! its result written to the result store or register. Invariant: arguments take R4..R15, and the excess the caller's
//! outgoing stack area (`crate::ir::STACK_ARG_REG`).

use super::*;

/// The bodiless functions a whole-program cubin may call: the driver resolves them (ptxas
/// 11.8 refuses any other unresolved `.extern .func` with "Unresolved extern function").
pub(in crate::ir::build) fn is_system_function(name: &str) -> bool {
    matches!(name, "vprintf" | "malloc" | "free" | "__assertfail")
}

/// The widest result the call ABI returns in registers (R4..R15).
const MAX_REGISTER_RESULT: u32 = 48;

/// Where a system function's parameters and result go under the sm_50 call ABI
/// (docs/calls.md): one entry per parameter, its size and first register.
#[derive(Clone, Debug)]
pub(in crate::ir::build) struct ExternSig {
    pub name: String,
    /// Per parameter: (bytes, first register).
    pub params: Vec<(u32, u8)>,
    /// Bytes of the one result (0: none); its words are R4, R5, .. up to 48 bytes. A wider
    /// result goes through memory: the caller passes the 32-bit local address of a buffer
    /// for it in R4 (the parameters start at R5) and the callee stores the result there
    /// (ptxas 11.8, probe `r64v.ptx`: `MOV R4, R1 ; JCAL` in the caller, `STL [R4+0x4], R5
    /// ; STL.64 [R4+0x10], R6 ...` in the callee). In the IR the call still has one `i32`
    /// result per word and the `SubReturn` one value per word; selection puts them through
    /// the buffer (`lower::select::call`), which lies in the caller's outgoing area after
    /// the stack arguments (`ir::result_buffer_offset`).
    pub ret_bytes: u32,
}

impl ExternSig {
    /// The register layout of `f`'s parameters, as ptxas 11.8 lays them out: from R4 up, a
    /// parameter of one word takes the lowest free register (filling a hole an 8-aligned one
    /// left), a wider one the registers after the highest taken, starting at an even one when
    /// it is 8-aligned. A parameter that does not fit in R4..R15 goes on the stack
    /// ([`crate::ir::STACK_ARG_REG`]): the next free offset of the caller's outgoing area at its
    /// alignment (at least 4), in parameter order (probes `p1.ptx`, `p2.ptx` in
    /// docs/calls.md); a later one-word parameter may still fill a register hole.
    pub fn of(f: &ast::Function) -> Result<ExternSig, String> {
        let name = f.name.text.to_string();
        let rets: Vec<u32> = f
            .rets
            .iter()
            .flatten()
            .flat_map(|d| d.names.iter().map(move |n| decl_size(d, n)))
            .collect();
        if rets.len() > 1 {
            return Err(format!(
                "unsupported call to '{name}': more than one result"
            ));
        }
        let ret_bytes = rets.first().copied().unwrap_or(0);
        // Up to 48 bytes come back in R4..R15 (probes `p3.ptx`, `r32.ptx`, `r48.ptx`); a
        // wider result goes through a buffer whose address takes R4.
        let mut taken = [false; 16];
        taken[4] = ret_bytes > MAX_REGISTER_RESULT;
        let mut stack = 0u32;
        let mut params = Vec::new();
        for d in &f.params {
            for n in &d.names {
                let bytes = decl_size(d, n);
                let words = bytes.div_ceil(4).max(1) as usize;
                let align = d.align.unwrap_or_else(|| (d.ty.bits() / 8).max(1));
                let first = if words == 1 {
                    (4..16).find(|&r| !taken[r])
                } else {
                    let after = (4..16).rev().find(|&r| taken[r]).map_or(4, |r| r + 1);
                    let start = if align >= 8 {
                        after.next_multiple_of(2)
                    } else {
                        after
                    };
                    (start + words <= 16).then_some(start)
                };
                let Some(first) = first else {
                    let off = stack.next_multiple_of(align.clamp(4, 8));
                    let word = crate::ir::STACK_ARG_REG as u32 + off / 4;
                    if word + words as u32 > 256 {
                        return Err(format!(
                            "unsupported call to '{name}': more than {} bytes of stack arguments",
                            4 * (256 - crate::ir::STACK_ARG_REG as u32)
                        ));
                    }
                    stack = off + 4 * words as u32;
                    params.push((bytes, word as u8));
                    continue;
                };
                taken[first..first + words]
                    .iter_mut()
                    .for_each(|t| *t = true);
                params.push((bytes, first as u8));
            }
        }
        Ok(ExternSig {
            name,
            params,
            ret_bytes,
        })
    }
}

impl FnBuilder<'_, '_> {
    /// A `call` of a system function (the expander left it in place): the argument stores'
    /// words into the ABI's registers, an `ExternCall`, its result words into the result
    /// store or register.
    /// Building a subroutine: a store for its result (bound to the result's name), and its
    /// size; `None` when it returns nothing.
    pub(in crate::ir::build) fn declare_sub_result(
        &mut self,
        f: &ast::Function,
        sig: &ExternSig,
    ) -> Option<Option<(usize, u32)>> {
        let Some((d, n)) = f
            .rets
            .iter()
            .flatten()
            .flat_map(|d| d.names.iter().map(move |n| (d, n)))
            .next()
        else {
            return Some(None);
        };
        if d.space == StateSpace::Reg {
            self.error(
                n.name.span,
                "unsupported: a .reg result of a recursive function",
            );
            return None;
        }
        let Sym::Arg { store } = self.new_store(sig.ret_bytes) else {
            return None;
        };
        self.scopes[0].syms.insert(n.name.id, Sym::Arg { store });
        Some(Some((store, sig.ret_bytes)))
    }

    /// `ret`/`exit` outside any inlined callee: the kernel's end, or a subroutine's `ret`,
    /// which returns the result store's bytes as the ABI's result words.
    pub(in crate::ir::build) fn frame0_ret(&mut self, ins: &Instruction) -> Option<()> {
        let Some(result) = self.sub_ret.filter(|_| ins.opcode == Opcode::Ret) else {
            self.ins().ret();
            return Some(());
        };
        let words = match result {
            None => Vec::new(),
            Some((store, 8)) => vec![self.arg_read(store, 0, 8, ins.span)?],
            Some((store, 4)) => vec![self.arg_read(store, 0, 4, ins.span)?],
            Some((store, b @ (1 | 2))) => {
                let v = self.arg_read(store, 0, b, ins.span)?;
                vec![self.ins().zext(Type::I32, v)]
            }
            // A wide result (an aggregate): one word per register, R4 up; over 48 bytes, one
            // word per slot of the caller's buffer (`ExternSig::ret_bytes`: selection
            // stores them there).
            Some((store, b)) if b > 8 => {
                let mut words = Vec::new();
                for k in 0..b.div_ceil(4) {
                    words.push(self.read_result_word(
                        store,
                        4 * k,
                        (b - 4 * k).min(4),
                        ins.span,
                    )?);
                }
                words
            }
            Some((_, b)) => {
                self.error(ins.span, format!("unsupported {b}-byte result"));
                return None;
            }
        };
        self.ins().sub_return(&words);
        Some(())
    }

    pub(in crate::ir::build) fn extern_call(&mut self, ins: &Instruction) -> Option<()> {
        let Some(sig) = self
            .extern_sigs
            .get(&(ins as *const Instruction as usize))
            .cloned()
        else {
            self.error(
                ins.span,
                "internal error: a call left to the ABI has no signature",
            );
            return None;
        };
        let (ret_ops, arg_ops) = call_lists(ins)?;
        self.abi_call(ins, &sig, &ret_ops, &arg_ops)
    }

    /// One candidate of an indirect call that is a subroutine (`Item::SubCall`, inside the
    /// candidate's dispatch frame): its `CAL`, passing the frame's parameters (bound to the
    /// call's argument stores by `call_begin`) and writing its result store, which
    /// `call_end` copies to the call's.
    pub(in crate::ir::build) fn sub_call(&mut self, site: &CallSite<'_>) -> Option<()> {
        let sig = match ExternSig::of(site.callee) {
            Ok(sig) => sig,
            Err(why) => {
                self.error(site.ins.span, why);
                return None;
            }
        };
        let names = |v: &[ast::VarDecl]| -> Vec<Operand> {
            v.iter()
                .flat_map(|d| d.names.iter().map(|n| Operand::Name(n.name.clone())))
                .collect()
        };
        let ret_ops = site.callee.rets.as_deref().map(names).unwrap_or_default();
        let arg_ops = names(&site.callee.params);
        self.abi_call(site.ins, &sig, &ret_ops, &arg_ops)
    }

    /// The call of `sig` from `ins`: `arg_ops` read into the ABI's registers, the
    /// [`crate::ir::InstData::ExternCall`], its result written to `ret_ops`' first operand.
    fn abi_call(
        &mut self,
        ins: &Instruction,
        sig: &ExternSig,
        ret_ops: &[Operand],
        arg_ops: &[Operand],
    ) -> Option<()> {
        if arg_ops.len() != sig.params.len() {
            self.error(
                ins.span,
                format!(
                    "call to '{}' passes {} arguments, it takes {}",
                    sig.name,
                    arg_ops.len(),
                    sig.params.len()
                ),
            );
            return None;
        }
        let mut args = Vec::new();
        let mut regs = Vec::new();
        for (arg, &(bytes, first)) in arg_ops.iter().zip(&sig.params) {
            let store = self.arg_store(arg, bytes, None)?;
            if bytes == 8 {
                // A 64-bit argument (a pointer, a size): one read, split into its words.
                let v = self.arg_read(store, 0, 8, arg.span())?;
                args.push(v);
                regs.push(first);
                continue;
            }
            let mut pair_done = false;
            for w in 0..bytes.div_ceil(4) {
                if std::mem::take(&mut pair_done) {
                    continue;
                }
                // An 8-byte word pair of an aggregate that the caller wrote as one 64-bit
                // value, at an even register (an 8-aligned stack offset): passed whole, so
                // that a stack pair is one `STL.64` (ptxas 11.8 stores a struct's `.b64`
                // member so, probe `manyk.ptx`).
                if (u32::from(first) + w) % 2 == 0 && self.whole_pair(store, 4 * w, bytes) {
                    args.push(self.arg_read(store, 4 * w, 8, arg.span())?);
                    regs.push(first + w as u8);
                    pair_done = true;
                    continue;
                }
                let n = (bytes - 4 * w).min(4);
                // A 3-byte tail is read as a 2- and a 1-byte piece.
                let pieces: &[u32] = match n {
                    4 => &[4],
                    3 => &[2, 1],
                    2 => &[2],
                    _ => &[1],
                };
                let mut word = None;
                let mut at = 0;
                for &piece in pieces {
                    let v = self.arg_read(store, 4 * w + at, piece, arg.span())?;
                    let v = if piece < 4 {
                        self.ins().zext(Type::I32, v)
                    } else {
                        v
                    };
                    let v = if at > 0 {
                        let sh = self.ins().iconst(Type::I32, i64::from(at * 8));
                        self.ins().binary(BinaryOp::Shl, v, sh)
                    } else {
                        v
                    };
                    word = Some(match word {
                        None => v,
                        Some(w0) => self.ins().binary(BinaryOp::Or, w0, v),
                    });
                    at += piece;
                }
                args.push(word?);
                regs.push(first + w as u8);
            }
        }
        let callee = match self.m.ir.extern_funcs.iter().position(|n| *n == sig.name) {
            Some(i) => i,
            None => {
                self.m.ir.extern_funcs.push(sig.name.clone());
                self.m.ir.extern_funcs.len() - 1
            }
        } as u32;
        let wide: Vec<Type>;
        let ret_ty: &[Type] = match sig.ret_bytes {
            0 => &[],
            8 => &[Type::I64],
            b if b > 8 => {
                wide = vec![Type::I32; b.div_ceil(4) as usize];
                &wide
            }
            _ => &[Type::I32],
        };
        let rets = self.ins().extern_call(callee, &args, &regs, ret_ty);
        if sig.ret_bytes > 8 {
            return self.write_wide_result(ins, ret_ops.first(), &rets, sig.ret_bytes);
        }
        let (Some(dest), Some(&ret)) = (ret_ops.first(), rets.first()) else {
            return Some(());
        };
        // The result as one value of the result's width.
        let value = match sig.ret_bytes {
            4 | 8 => ret,
            b @ (1 | 2) => self.ins().trunc(int_of_bits(b * 8)?, ret),
            _ => {
                self.error(
                    ins.span,
                    format!("unsupported {}-byte result", sig.ret_bytes),
                );
                return None;
            }
        };
        match dest {
            Operand::Sink(_) => Some(()),
            Operand::Name(a) => match self.lookup(a) {
                Some(Err(Sym::Arg { store })) => {
                    self.arg_write(store, 0, sig.ret_bytes, value, ins.span)
                }
                _ => {
                    let v = self.dest1(dest)?;
                    self.write(v, value, false, ins.span)
                }
            },
            other => {
                let v = self.dest1(other)?;
                self.write(v, value, false, ins.span)
            }
        }
    }
}

impl FnBuilder<'_, '_> {
    /// Word `at / 4` of a wide result store (`n` bytes of it, 1 to 4), as an i32.
    fn read_result_word(
        &mut self,
        store: usize,
        at: u32,
        n: u32,
        span: Span,
    ) -> Option<crate::ir::Value> {
        let v = self.arg_read(store, at, n, span)?;
        Some(if n < 4 {
            self.ins().zext(Type::I32, v)
        } else {
            v
        })
    }

    /// A result of more than 8 bytes (`rets`: its words, R4 up) into the `.param` store the
    /// call names.
    fn write_wide_result(
        &mut self,
        ins: &Instruction,
        dest: Option<&Operand>,
        rets: &[crate::ir::Value],
        bytes: u32,
    ) -> Option<()> {
        let store = match dest {
            None | Some(Operand::Sink(_)) => return Some(()),
            Some(Operand::Name(a)) => match self.lookup(a) {
                Some(Err(Sym::Arg { store })) => Some(store),
                _ => None,
            },
            Some(_) => None,
        };
        let Some(store) = store else {
            self.error(
                ins.span,
                format!("a {bytes}-byte result needs a .param variable to receive it"),
            );
            return None;
        };
        for (k, &w) in rets.iter().enumerate() {
            let at = 4 * k as u32;
            let n = (bytes - at).min(4);
            let v = if n < 4 {
                self.ins().trunc(int_of_bits(n * 8)?, w)
            } else {
                w
            };
            self.arg_write(store, at, n, v, ins.span)?;
        }
        Some(())
    }
}

impl FnBuilder<'_, '_> {
    /// Whether bytes `at..at + 8` of store `store` (`bytes` long) are one 8-byte integer
    /// slot: a value the code wrote (or will read) as one 64-bit integer (an `f64` one stays
    /// two words: the call's pair arguments are `i64`).
    fn whole_pair(&self, store: usize, at: u32, bytes: u32) -> bool {
        at + 8 <= bytes
            && self.stores[store]
                .slots
                .iter()
                .any(|sl| sl.off == at && sl.bytes == 8 && self.var_ty[sl.var] == Type::I64)
    }
}
