//! A texture handle and a sampler handle in registers (`.texmode_independent`,
//! `tex d, [th, sh, {c}]`, `tld4` alike), as ptxas 11.8 combines them for the `.B` forms:
//!
//! ```text
//! SHL  h, sh, 0x14           the sampler's header index in bits 20..31
//! BFI  h, th, 0x1400, h      the texture's header index in bits 0..19
//! TEX.B rd, {c}, h, 0x0, ...
//! ```
//!
//! In: the two `.u64` operands (neither a module `.texref` nor a module `.samplerref`).
//! Out: a [`TexHandle::Combined`] fetch whose handle is that combined word (zero-extended to
//! 64 bits), built from ordinary IR (`shl`, `bfi`), so that `ir::eval` and the simulator
//! both see the combined handle. What it names is the texture model's business
//! ([`crate::texture::TextureBindings::add_sampler_object`]: a combined handle reads the
//! texture object `h & 0xfffff` through the sampler object `h >> 20`).

use super::super::{FnBuilder, Sym};
use crate::ir::bits::BitOp;
use crate::ir::tex::TexHandle;
use crate::ir::{Type, Value};
use crate::ptx::ast::{self, Operand};

/// Bits of the texture's header index in the combined handle.
const TEXTURE_BITS: i64 = 20;

impl FnBuilder<'_, '_> {
    /// Whether `[t, s, ..]` names handles in registers rather than module variables.
    pub(super) fn sampler_in_register(&mut self, t: &Operand, s: &Operand) -> bool {
        let mut module_ref = |op: &Operand| match op {
            Operand::Name(n) => matches!(
                self.lookup(n),
                Some(Err(Sym::TexRef(_) | Sym::SamplerRef(_)))
            ),
            _ => false,
        };
        !module_ref(t) && !module_ref(s)
    }

    /// The combined handle of texture handle `t` and sampler handle `s` (module essay).
    pub(super) fn tex_sampler_registers(
        &mut self,
        t: &Operand,
        s: &Operand,
    ) -> Option<(TexHandle, Option<Value>)> {
        let th = self.read(t, Type::I64, Some(ast::Type::U64))?;
        let sh = self.read(s, Type::I64, Some(ast::Type::U64))?;
        let mut b = self.ins();
        let tw = b.trunc(Type::I32, th);
        let sw = b.trunc(Type::I32, sh);
        let bits = b.iconst(Type::I32, TEXTURE_BITS);
        let high = b.shl(sw, bits);
        let zero = b.iconst(Type::I32, 0);
        let word = b.bits(BitOp::Bfi, &[tw, high, zero, bits]);
        let h = b.zext(Type::I64, word);
        Some((TexHandle::Combined, Some(h)))
    }
}
