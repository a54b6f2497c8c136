//! `--explain`: the address expression a `LEA` chain computes, in the program's own terms.
//!
//! In: the IR function and the [`AddrMode`] a chain was built for (with the displacement the
//! chain itself adds). Out: text such as `%rd1 + (sext(%r3) << 2) + 16`, which selection
//! stores in the chain's [`super::Sm50Inst::note`] when [`super::LowerOptions::explain`] is on.
//!
//! A leaf is named by the PTX register it was first written to (`ir::Function::value_name`),
//! else by what defines it: a kernel parameter by its name, a special register (`%tid.x`), a
//! constant by its value, anything else by its IR name (`v12`, as `--emit ir` prints it).

use super::amode::{AddrMode, Base, Ext};
use crate::ir::{Function, InstData, Value, ValueDef};

/// The expression of a chain computing `mode` with `disp` added inside it; `sp`: a `.local`
/// chain whose base is the stack pointer.
pub(super) fn chain_expr(f: &Function, mode: &AddrMode, disp: i64, sp: bool) -> String {
    let mut terms: Vec<String> = Vec::new();
    match mode.base {
        Base::None if sp => terms.push("SP".into()),
        Base::None => {}
        Base::Reg(v) => terms.push(leaf(f, v)),
        Base::Param { value, .. } => terms.push(leaf(f, value)),
    }
    let mut s = terms.join("");
    if let Some(ix) = mode.index {
        let mut t = leaf(f, ix.value);
        match ix.ext {
            Ext::None => {}
            Ext::Zext => t = format!("zext({t})"),
            Ext::Sext => t = format!("sext({t})"),
        }
        if ix.shift > 0 {
            t = format!("({t} << {})", ix.shift);
        }
        s = match (s.is_empty(), ix.neg) {
            (true, false) => t,
            (true, true) => format!("-{t}"),
            (false, false) => format!("{s} + {t}"),
            (false, true) => format!("{s} - {t}"),
        };
    }
    if disp != 0 || s.is_empty() {
        s = match (s.is_empty(), disp < 0) {
            (true, _) => format!("{disp}"),
            (false, false) => format!("{s} + {disp}"),
            (false, true) => format!("{s} - {}", disp.unsigned_abs()),
        };
    }
    s
}

/// A leaf's name (see the module essay).
fn leaf(f: &Function, v: Value) -> String {
    if let Some(n) = f.value_name(v) {
        return n.to_string();
    }
    if let ValueDef::Result(i, _) = f.values[v].def {
        match &f.insts[i].data {
            InstData::LoadParam { offset, .. } => {
                if let Some(p) = f.params.iter().find(|p| p.offset == *offset) {
                    return p.name.clone();
                }
                return format!("param[{offset}]");
            }
            InstData::SpecialReg { reg } => return reg.to_string(),
            InstData::Iconst { imm, .. } => return format!("{}", *imm as i64),
            _ => {}
        }
    }
    v.to_string()
}
