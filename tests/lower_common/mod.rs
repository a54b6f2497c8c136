//! Helpers shared by the `lower_*` tests: run lowering, allocation (checker on) and emit, and
//! print each stage.

#![allow(dead_code)]

use leafold::ir::{Function, Module};
use leafold::lower::{self, LowerOptions};
use leafold::machinst::{allocate, AllocOptions};
use leafold::oracle::Oracle;
use leafold::sm50::{self, Bundle, Ctrl, Field, Form};

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

/// Every instruction encodes to a word nvdisasm prints exactly as our printer does (neutral
/// control words). Skips with the oracle's notice when the tools are absent.
pub fn check_with_nvdisasm(test: &str, insts: &[sm50::Inst]) {
    let Some(oracle) = Oracle::for_test(test) else {
        return;
    };
    let mut words = Vec::new();
    let mut ours = Vec::new();
    for (n, chunk) in insts.chunks(3).enumerate() {
        let mut b = Bundle {
            ctrl: [Ctrl::NEUTRAL; 3],
            insts: [0x50b0000000070f00; 3],
        };
        for (k, i) in chunk.iter().enumerate() {
            // BRA holds an instruction index here; give it a real (small, forward-safe) offset
            // so the word is an ordinary branch.
            let mut i = *i;
            if i.form == Form::BRA {
                i.set(Field::Rel, 0x10);
            }
            b.insts[k] = sm50::encode(&i);
            let addr = (n * 32 + 8 + 8 * k) as u64;
            ours.push((addr, sm50::print(&i, addr, 0)));
        }
        words.push(b.ctrl_word());
        words.extend(b.insts);
    }
    let out = oracle.nvdisasm_raw(&words).expect("nvdisasm runs");
    let mut theirs = std::collections::HashMap::new();
    for line in out.lines() {
        let Some(p) = line.find("/*") else { continue };
        let rest = &line[p + 2..];
        let Some(e) = rest.find("*/") else { continue };
        let Ok(addr) = u64::from_str_radix(&rest[..e], 16) else {
            continue;
        };
        let text = rest[e + 2..].split("/*").next().unwrap_or("").trim();
        theirs.insert(addr, text.trim_end_matches(';').trim().to_string());
    }
    for (addr, text) in ours {
        assert_eq!(
            theirs.get(&addr).map(String::as_str),
            Some(text.as_str()),
            "instruction at {addr:#x}"
        );
    }
}
