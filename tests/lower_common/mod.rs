//! Helpers shared by the `lower_*` tests: run lowering, allocation (checker on) and emit, and
//! print each stage.

#![allow(dead_code)]

use leafold::ir::{Function, Module};
use leafold::lower::{self, LowerOptions};
use leafold::machinst::{allocate, AllocOptions};
use leafold::sm50::{self, Field, Form};

pub struct Stages {
    pub vcode: String,
    pub alloc: String,
    pub sass: Vec<sm50::Inst>,
}

/// Lower `f` (the only kernel of a module with no variables unless `m` is given), allocate with
/// the regalloc2 checker, emit.
pub fn run(m: Option<&Module>, f: &Function, opts: LowerOptions) -> Stages {
    let empty = Module::new();
    let m = m.unwrap_or(&empty);
    let vc = lower::lower_function(m, f, &opts).expect("lowering");
    let al = allocate(
        &vc,
        &AllocOptions {
            checker: true,
            ..AllocOptions::default()
        },
    )
    .expect("allocation");
    assert!(al.checked);
    Stages {
        vcode: vc.to_string(),
        alloc: al.to_string(),
        sass: lower::emit(&al),
    }
}

/// The emitted instructions as text, one per line, `BRA` targets shown as indices.
pub fn sass_text(insts: &[sm50::Inst]) -> String {
    let mut s = String::new();
    for (k, i) in insts.iter().enumerate() {
        let text = if i.form == Form::BRA || i.form == Form::SSY {
            let t = sm50::print(i, 0, 0);
            let name = if i.form == Form::BRA { "BRA" } else { "SSY" };
            let cut = t.find(name).map_or(t.len(), |p| p + 3);
            format!("{} .L{}", &t[..cut], i.get(Field::Rel).unwrap_or(0))
        } else {
            sm50::print(i, 0, 0)
        };
        s.push_str(&format!("{k:3}  {text}\n"));
    }
    s
}

/// How many emitted instructions belong to each form class (`LEA`, `LEA_HI`, `MOV`, ...).
pub fn count(insts: &[sm50::Inst], class: &str) -> usize {
    insts.iter().filter(|i| i.info().class == class).count()
}
