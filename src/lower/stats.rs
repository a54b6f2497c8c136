//! Folding strategies ([`Fold`]) and what folding did in one kernel ([`FoldStats`]).
//!
//! In: selection counts events while it builds addresses (`select` bumps the counters); the
//! SASS-level counts come from the final instructions ([`count_sass`]). Out: a
//! [`FoldStats`] per kernel, which `leafold compile --stats` prints as JSON and `compare`
//! reuses for its address-arithmetic column.
//!
//! Strategies, from the baseline up:
//! * [`Fold::None`]: no LEA chains. Addresses are computed with ISCADD/SHL/SHR/SHF and
//!   IADD.CC + IADD.X ([`super::plain`]), generic accesses use `PT`, displacements stay in the
//!   memory instruction. Identical address computations in a block are still shared, as any
//!   CSE-ing compiler would. (Non-address 64-bit shifts keep their LEA forms.)
//! * [`Fold::Lea`]: every access gets its own LEA chain (with `Plg` and in-chain
//!   displacements as the default rules decide); chains are not shared between accesses and
//!   plain-value sums are not turned into chains.
//! * [`Fold::Block`]: `Lea` plus sharing identical chains among the accesses of one block
//!   (and `base + disp` Plg steps off a shared chain for generic accesses), never across
//!   blocks: no chain register lives across a loop or a dominator region. The driver's
//!   register retry compiles with it first (see `driver`): the six loads of a table row
//!   `[p+8]`..`[p+48]` keep one chain while nothing new lives beyond the block.
//! * [`Fold::Full`] (default): `Lea` plus sharing identical chains across the accesses of a
//!   block and of the blocks it dominates (one sign word per sign-extended index, one base
//!   chain under per-displacement `Plg` steps), computing address-shaped plain sums
//!   (`base + (index << s)`) as chains, and extended-precision `add.cc`/`addc` chains as
//!   `LEA` + `LEA.HI.X` links (`lower::carry`). Carry chains count as chains formed.

use crate::sm50::{Form, Inst};
use std::collections::BTreeMap;

/// How much address arithmetic to fold (see the module essay).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Fold {
    None,
    Lea,
    Block,
    #[default]
    Full,
}

impl Fold {
    pub fn parse(s: &str) -> Option<Fold> {
        Some(match s {
            "none" => Fold::None,
            "lea" => Fold::Lea,
            "block" => Fold::Block,
            "full" => Fold::Full,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Fold::None => "none",
            Fold::Lea => "lea",
            Fold::Block => "block",
            Fold::Full => "full",
        }
    }
}

/// What folding did in one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldStats {
    /// Address chains built (LEA chains, or ISCADD/IADD sequences under `--fold=none`).
    pub chains_formed: u32,
    /// Accesses that reused a chain built earlier in the block.
    pub chains_shared: u32,
    /// Generic accesses that take their window predicate from the chain's last LEA.
    pub plg_folds: u32,
    /// Displacements carried by the memory instruction's immediate.
    pub disp_folds: u32,
    /// Displacements added inside a chain (so that `Plg` covers the final address).
    pub disp_in_chain: u32,
    /// Addresses or sums that got no chain, by reason.
    pub rejected: BTreeMap<&'static str, u32>,
    /// Instructions, LEA instructions and address-arithmetic instructions in the final SASS
    /// (see [`count_sass`]).
    pub sass: SassCounts,
}

impl FoldStats {
    pub(crate) fn reject(&mut self, why: &'static str) {
        *self.rejected.entry(why).or_default() += 1;
    }
}

/// Instruction counts of one kernel's SASS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SassCounts {
    /// All instructions but trailing NOP padding.
    pub instructions: u32,
    /// `LEA` and `LEA.HI`, any form.
    pub lea: u32,
    /// Address arithmetic in the broad sense compare uses: LEA, ISCADD, IADD*, SHL/SHR/SHF,
    /// XMAD and MOV.
    pub address_arith: u32,
}

/// Whether `form` is a LEA.
pub fn is_lea(form: Form) -> bool {
    form_name(form).starts_with("LEA")
}

/// Whether `form` counts as address arithmetic (see [`SassCounts::address_arith`]).
pub fn is_address_arith(form: Form) -> bool {
    let n = form_name(form);
    ["LEA", "ISCADD", "IADD", "SHL", "SHR", "SHF_", "XMAD", "MOV"]
        .iter()
        .any(|p| n.starts_with(p))
}

/// The form's name as the instruction set description spells it (`LEA_HI_C`), which is its
/// `Debug` text (checked for every form by a test): read from the form table, not formatted
/// per instruction.
fn form_name(form: Form) -> &'static str {
    form.info().name
}

/// Count a kernel's instructions (trailing NOP padding excluded).
pub fn count_sass<'a>(insts: impl IntoIterator<Item = &'a Inst>) -> SassCounts {
    let insts: Vec<&Inst> = insts.into_iter().collect();
    let padding = insts
        .iter()
        .rev()
        .take_while(|i| i.form == Form::NOP)
        .count();
    let mut c = SassCounts::default();
    for i in &insts[..insts.len() - padding] {
        c.instructions += 1;
        c.lea += is_lea(i.form) as u32;
        c.address_arith += is_address_arith(i.form) as u32;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_names_are_their_debug_text() {
        for f in crate::sm50::FORMS.iter() {
            assert_eq!(form_name(f.form), format!("{:?}", f.form));
        }
    }

    #[test]
    fn classification() {
        assert!(is_lea(Form::LEA_HI_C) && is_address_arith(Form::LEA_R));
        assert!(is_address_arith(Form::IADD32I) && is_address_arith(Form::XMAD_R));
        assert!(is_address_arith(Form::SHF_LI) && !is_address_arith(Form::SHFL_II));
        assert!(!is_address_arith(Form::LDG) && !is_lea(Form::ISCADD_R));
        let insts = [
            Inst::new(Form::LEA_R),
            Inst::new(Form::LDG),
            Inst::new(Form::NOP),
            Inst::new(Form::EXIT),
            Inst::new(Form::NOP),
        ];
        let c = count_sass(&insts);
        assert_eq!((c.instructions, c.lea, c.address_arith), (4, 1, 1));
    }
}
