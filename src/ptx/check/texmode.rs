//! The texturing mode's rule for fetches: in a `.target ..., texmode_independent` module a
//! `tex` or `tld4` names a sampler, `[t, s, {c}]`.
//!
//! In: one instruction of such a module. Out: an error at its `[...]` operand when a `tex` or
//! `tld4` has no sampler (`[t, {c}]`), with ptxas 11.8's wording ("Argument 2 of instruction
//! 'tex': .samplerref or .u64 register expected"); ptxas refuses every such fetch (by
//! `.texref` or by a texture handle in a register, float or integer coordinates,
//! multisample shapes included). Unified modules (the default) are not affected, and `txq`
//! (one operand in brackets) takes no sampler in either mode.

use super::*;

impl Checker<'_, '_> {
    /// A sampler-less fetch in an independent-mode module is an error (module essay).
    pub(super) fn texmode_fetch(&mut self, i: &Instruction) {
        if !self.independent || !matches!(i.opcode, Opcode::Tex | Opcode::Tld4) {
            return;
        }
        if let Some(Operand::TexArgs(items, span)) = i.operands.get(1) {
            if items.len() == 2 {
                let name = i.opcode.info().name;
                self.error(
                    *span,
                    format!(
                        "Argument 2 of instruction '{name}': .samplerref or .u64 register \
                         expected (a module in texmode_independent names a sampler in every \
                         fetch: [t, s, {{c}}])"
                    ),
                );
            }
        }
    }
}
