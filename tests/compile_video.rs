//! The PTX video instructions (scalar `vadd vsub vabsdiff vmin vmax vshl vshr vset vmad`
//! and the SIMD `2`/`4` forms) and the 64-bit `bfe`/`bfi`, compiled end to end and checked
//! four ways:
//!
//! * each test builds one kernel from a list of instruction forms (every thread reads
//!   `a b c e` (u32) and `x y` (u64), runs each form into its own register and stores it);
//! * the simulator running our cubin equals `ir::eval` on every output word, over several
//!   launches of 64 threads with random inputs mixed with edge bytes and halves (0, 0x7f,
//!   0x80, 0xff, 0x7fff, 0x8000, ...) and small shift counts / bit positions;
//! * the simulator also equals [`model`], this file's own reading of the PTX ISA pseudo-code
//!   (written from the spec, independently of `ir::build`'s expansion, with i128 so that
//!   no intermediate can overflow);
//! * the hazard checker finds nothing, and nvdisasm and cuobjdump print every word as we do
//!   (when the oracle is installed);
//! * the scalar forms are ptxas 11.8's native instructions: the same video opcodes, with the
//!   same modifiers, as ptxas writes for the same kernel ([`scalar_forms_are_native_as_ptxas`]).

mod common;

use common::Rng;
use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::sim;
use leafold::sm50::sched::check::{check_hazards, decode_text};

const IN: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;
const THREADS: u32 = 64;

/// One thread's inputs.
#[derive(Clone, Copy, Debug)]
struct Inputs {
    w: [u32; 4],
    x: u64,
    y: u64,
}

impl Rng {
    fn edge_byte(&mut self) -> u32 {
        const E: [u32; 8] = [0, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x40];
        let r = self.next();
        if r % 2 == 0 {
            E[(r >> 8) as usize % E.len()]
        } else {
            (r >> 24) as u32 & 0xff
        }
    }
    /// A word of edge bytes, edge halves, small numbers (shift counts) or random bits.
    fn vword(&mut self) -> u32 {
        let r = self.next() % 5;
        match r {
            0 => (0..4).fold(0, |w, k| w | self.edge_byte() << (8 * k)),
            1 => {
                const H: [u32; 6] = [0, 1, 0x7fff, 0x8000, 0xffff, 0x8001];
                let lo = H[self.next() as usize % 6];
                let hi = H[self.next() as usize % 6];
                lo | hi << 16
            }
            2 => (self.next() % 40) as u32,
            _ => self.next_u32(),
        }
    }
    /// A 64-bit value, or a bit position / length around the edges 0, 32, 63, 64, 255, 256.
    fn dword(&mut self) -> u64 {
        const P: [u64; 14] = [
            0, 1, 31, 32, 33, 63, 64, 65, 127, 255, 256, 257, 0x140, 0x1ff,
        ];
        match self.next() % 4 {
            0 => P[self.next() as usize % P.len()],
            1 => (self.next() % 70) | (self.next() & !0xff),
            _ => self.next(),
        }
    }
    fn inputs(&mut self) -> Inputs {
        Inputs {
            w: [self.vword(), self.vword(), self.vword(), self.vword()],
            x: self.dword(),
            y: self.dword(),
        }
    }
}

/// The kernel running `forms` (each with `D` for its destination register and `%a %b %c %e`
/// (u32), `%x %y` (u64) and `%f` (the low word of `%y`) as inputs); 64-bit results go in `.b64` registers (forms that name
/// `bfe.*64`/`bfi.b64`/`brev.b64`).
fn kernel(forms: &[&str]) -> String {
    let n = forms.len();
    let mut body = String::new();
    for (k, f) in forms.iter().enumerate() {
        let wide = is_wide(f);
        let d = if wide {
            format!("%z{k}")
        } else {
            format!("%o{k}")
        };
        body += &format!("    {};\n", f.replace('D', &d));
        let t = if wide { "u64" } else { "u32" };
        body += &format!("    st.global.{t} [%rd2+{}], {d};\n", 8 * k);
    }
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .b32 %a, %b, %c, %e, %f, %t, %o<{n}>;\n.reg .b64 %x, %y, %rd<6>, %z<{n}>;\n\
         ld.param.u64 %rd1, [in];\nld.param.u64 %rd2, [out];\nmov.u32 %t, %tid.x;\n\
         mul.wide.u32 %rd3, %t, 32;\nadd.s64 %rd1, %rd1, %rd3;\n\
         mul.wide.u32 %rd4, %t, {};\nadd.s64 %rd2, %rd2, %rd4;\n\
         ld.global.v4.u32 {{%a, %b, %c, %e}}, [%rd1];\n\
         ld.global.v2.u64 {{%x, %y}}, [%rd1+16];\ncvt.u32.u64 %f, %y;\n{body}    ret;\n}}\n",
        8 * n
    )
}

fn is_wide(form: &str) -> bool {
    ["bfe.", "bfi.", "brev."]
        .iter()
        .any(|p| form.starts_with(p))
}

fn compile_checked(test: &str, src: &str) -> leafold::driver::Output {
    let opts = Options {
        file_name: format!("{test}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    };
    let out =
        compile(src, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).expect("our cubin reads back");
    let (insts, ctrl, targets) = decode_text(&c.kernels[0].code).expect("decodes");
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "hazards: {errs:?}\n{}", out.sass);
    common::check_with_nvdisasm(test, &insts);
    if let Some(oracle) = leafold::oracle::Oracle::for_test(test) {
        common::assert_oracle_prints_our_listing(&oracle, test, &out.cubin, &out.sass);
    }
    out
}

/// Compiles the forms into one kernel and compares sim, eval and the model over `launches`
/// launches of 64 threads; returns our SASS listing.
fn check(test: &str, forms: &[&str], launches: u64) -> String {
    let src = kernel(forms);
    let out = compile_checked(test, &src);
    let module = common::ir_module("t.ptx", &src);
    let n = forms.len();
    for seed in 0..launches {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (seed + 7).wrapping_mul(0x2545_f491_4f6c_dd1d));
        let inputs: Vec<Inputs> = (0..THREADS).map(|_| rng.inputs()).collect();
        let bytes: Vec<u8> = inputs
            .iter()
            .flat_map(|i| {
                i.w.iter()
                    .flat_map(|w| w.to_le_bytes())
                    .chain(i.x.to_le_bytes())
                    .chain(i.y.to_le_bytes())
                    .collect::<Vec<u8>>()
            })
            .collect();
        let mut launch = Launch::new([1, 1, 1], [THREADS, 1, 1]);
        launch.params = IN
            .to_le_bytes()
            .into_iter()
            .chain(OUT.to_le_bytes())
            .collect();
        launch.global = vec![
            GlobalRegion { base: IN, bytes },
            GlobalRegion {
                base: OUT,
                bytes: vec![0; 8 * n * THREADS as usize],
            },
        ];
        let reference = eval::run(&module, "k", &launch).expect("ir::eval runs");
        let ours = sim::run_cubin(&out.cubin, "k", &launch)
            .unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
        let (s, e) = (ours.region(OUT).unwrap(), reference.region(OUT).unwrap());
        for (t, inp) in inputs.iter().enumerate() {
            for (k, form) in forms.iter().enumerate() {
                let at = 8 * (t * n + k);
                let word = |m: &[u8]| u64::from_le_bytes(m[at..at + 8].try_into().unwrap());
                let width_mask = if is_wide(form) { u64::MAX } else { 0xffff_ffff };
                let (sv, ev) = (word(s) & width_mask, word(e) & width_mask);
                let mv = model(form, inp) & width_mask;
                assert!(
                    sv == ev && sv == mv,
                    "seed {seed} thread {t} `{form}` on {inp:x?}: sim {sv:#x}, eval {ev:#x}, \
                     model {mv:#x}\n{}",
                    out.sass
                );
            }
        }
    }
    out.sass
}

// ---- The model: PTX ISA 9.7.10 pseudo-code, on i128. ----

/// A parsed form: opcode, modifiers, operands (name and selector).
struct Form<'a> {
    op: &'a str,
    mods: Vec<&'a str>,
    ops: Vec<(&'a str, Option<&'a str>)>,
}

fn parse(form: &str) -> Form<'_> {
    let (head, rest) = form.split_once(' ').unwrap();
    let mut words = head.split('.');
    let op = words.next().unwrap();
    let mods = words.collect();
    let ops = rest
        .split(',')
        .map(|o| {
            let o = o.trim();
            match o.split_once('.') {
                Some((r, s)) => (r, Some(s)),
                None => (o, None),
            }
        })
        .collect();
    Form { op, mods, ops }
}

fn value(name: &str, i: &Inputs) -> u64 {
    match name {
        "%a" => i.w[0] as u64,
        "%b" => i.w[1] as u64,
        "%c" => i.w[2] as u64,
        "%e" => i.w[3] as u64,
        "%x" => i.x,
        "%y" => i.y,
        "%f" => i.y & 0xffff_ffff,
        n => n.parse::<i64>().unwrap() as u64,
    }
}

fn signed(t: &str) -> bool {
    t == "s32" || t == "s64"
}

/// `partSelectSignExtend`: the byte / half / word `sel` of `x`, extended by its type.
fn part(x: u64, s: bool, sel: Option<&str>) -> i128 {
    let (pos, len) = match sel {
        None => (0, 32),
        Some(s) => {
            let d = (s.as_bytes()[1] - b'0') as u32;
            if s.starts_with('b') {
                (8 * d, 8)
            } else {
                (16 * d, 16)
            }
        }
    };
    let v = (x >> pos) & ((1u64 << len) - 1);
    if s && v >> (len - 1) & 1 == 1 {
        v as i128 - (1i128 << len)
    } else {
        v as i128
    }
}

fn clamp(v: i128, s: bool, bits: u32) -> i128 {
    let (lo, hi) = if s {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    v.clamp(lo, hi)
}

fn cmp(c: &str, a: i128, b: i128) -> bool {
    match c {
        "eq" => a == b,
        "ne" => a != b,
        "lt" => a < b,
        "le" => a <= b,
        "gt" => a > b,
        "ge" => a >= b,
        _ => panic!("compare {c}"),
    }
}

/// What the form writes, per the PTX ISA.
fn model(form: &str, i: &Inputs) -> u64 {
    let f = parse(form);
    let has = |m: &str| f.mods.contains(&m);
    let types: Vec<&str> = f
        .mods
        .iter()
        .copied()
        .filter(|m| ["u32", "s32", "u64", "s64", "b64"].contains(m))
        .collect();
    let v = |k: usize| value(f.ops[k].0, i);
    match f.op {
        "clz" => u64::from(v(1).leading_zeros()),
        "popc" => u64::from(v(1).count_ones()),
        "brev" => v(1).reverse_bits(),
        "bfind" => {
            let x = v(1);
            let x = if has("s64") && (x as i64) < 0 { !x } else { x };
            match (x, has("shiftamt")) {
                (0, _) => 0xffff_ffff,
                (x, true) => u64::from(x.leading_zeros()),
                (x, false) => 63 - u64::from(x.leading_zeros()),
            }
        }
        "bfe" => {
            let a = v(1);
            let (pos, len) = (v(2) & 0xff, v(3) & 0xff);
            let sbit = if !signed(types[0]) || len == 0 {
                0
            } else {
                a >> (pos + len - 1).min(63) & 1
            };
            (0..64).fold(0, |d, k| {
                let bit = if k < len && pos + k <= 63 {
                    a >> (pos + k) & 1
                } else {
                    sbit
                };
                d | bit << k
            })
        }
        "bfi" => {
            let (a, mut fv) = (v(1), v(2));
            let (pos, len) = (v(3) & 0xff, v(4) & 0xff);
            let mut k = 0;
            while k < len && pos + k <= 63 {
                fv = fv & !(1 << (pos + k)) | (a >> k & 1) << (pos + k);
                k += 1;
            }
            fv
        }
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vset" => {
            let vset = f.op == "vset";
            let (dt, at, bt) = if vset {
                ("u32", types[0], types[1])
            } else {
                (types[0], types[1], types[2])
            };
            let ta = part(v(1), signed(at), f.ops[1].1);
            let tb = part(v(2), signed(bt), f.ops[2].1);
            let tmp = match f.op {
                "vadd" => ta + tb,
                "vsub" => ta - tb,
                "vabsdiff" => (ta - tb).abs(),
                "vmin" => ta.min(tb),
                "vmax" => ta.max(tb),
                "vset" => {
                    let c = f.mods.iter().find(|m| cmp_name(m)).unwrap();
                    cmp(c, ta, tb) as i128
                }
                _ => {
                    let n = if has("clamp") { tb.min(32) } else { tb & 31 };
                    if f.op == "vshl" {
                        ta << n
                    } else {
                        ta >> n
                    }
                }
            };
            let dsel = f.ops[0].1;
            let ds = signed(dt);
            let tmp = if has("sat") {
                let bits = match dsel {
                    Some(s) if s.starts_with('b') => 8,
                    Some(_) => 16,
                    None => 32,
                };
                clamp(tmp, ds, bits)
            } else {
                tmp
            };
            let t = tmp as u32;
            if f.ops.len() == 3 {
                return t as u64;
            }
            let c = v(3) as u32;
            let d = if has("add") {
                t.wrapping_add(c)
            } else if has("min") {
                if ds {
                    (t as i32).min(c as i32) as u32
                } else {
                    t.min(c)
                }
            } else if has("max") {
                if ds {
                    (t as i32).max(c as i32) as u32
                } else {
                    t.max(c)
                }
            } else {
                let s = dsel.unwrap();
                let d = (s.as_bytes()[1] - b'0') as u32;
                let (pos, mask) = if s.starts_with('b') {
                    (8 * d, 0xffu32)
                } else {
                    (16 * d, 0xffff)
                };
                (t & mask) << pos | c & !(mask << pos)
            };
            d as u64
        }
        "vmad" => {
            // Operands may be negated (`-%a`): the product when exactly one of a, b is, c.
            let neg = |k: usize| f.ops[k].0.starts_with('-');
            let val = |k: usize| value(f.ops[k].0.trim_start_matches('-'), i);
            let (at, bt) = (types[1], types[2]);
            let ta = part(val(1), signed(at), f.ops[1].1);
            let tb = part(val(2), signed(bt), f.ops[2].1);
            let neg_ab = neg(1) != neg(2);
            let sf = signed(at) || signed(bt) || neg_ab || neg(3);
            let c = if sf {
                val(3) as u32 as i32 as i128
            } else {
                val(3) as i128
            };
            let prod = if neg_ab { -(ta * tb) } else { ta * tb };
            let c = if neg(3) { -c } else { c };
            let mut tmp = prod + c + has("po") as i128;
            if has("shr7") {
                tmp >>= 7;
            }
            if has("shr15") {
                tmp >>= 15;
            }
            if has("sat") {
                tmp = clamp(tmp, sf, 32);
            }
            tmp as u32 as u64
        }
        _ => simd(&f, i, &types),
    }
}

fn cmp_name(m: &str) -> bool {
    ["eq", "ne", "lt", "le", "gt", "ge"].contains(&m)
}

/// The SIMD forms: `extractAndSignExt`, per-lane op, `.sat`, then accumulate or merge.
fn simd(f: &Form, i: &Inputs, types: &[&str]) -> u64 {
    let lanes: usize = if f.op.ends_with('2') { 2 } else { 4 };
    let bits = 32 / lanes as u32;
    let op = &f.op[..f.op.len() - 1];
    let (dt, at, bt) = if op == "vset" {
        ("u32", types[0], types[1])
    } else {
        (types[0], types[1], types[2])
    };
    let has = |m: &str| f.mods.contains(&m);
    let ab = value(f.ops[1].0, i) | value(f.ops[2].0, i) << 32;
    let c = value(f.ops[3].0, i) as u32;
    // Lane k of a selector, lane 0 being the last digit written.
    let sel = |s: Option<&str>, dflt: &str| -> Vec<u64> {
        let s = s.unwrap_or(dflt);
        s[1..].bytes().rev().map(|d| (d - b'0') as u64).collect()
    };
    let (da, db) = if lanes == 2 {
        ("h10", "h32")
    } else {
        ("b3210", "b7654")
    };
    let asel = sel(f.ops[1].1, da);
    let bsel = sel(f.ops[2].1, db);
    let mask: Vec<bool> = match f.ops[0].1 {
        None => vec![true; lanes],
        Some(m) => (0..lanes)
            .map(|k| m[1..].bytes().any(|d| (d - b'0') as usize == k))
            .collect(),
    };
    let lane = |idx: u64, s: bool| -> i128 {
        let v = (ab >> (idx * bits as u64)) & ((1 << bits) - 1);
        if s && v >> (bits - 1) & 1 == 1 {
            v as i128 - (1i128 << bits)
        } else {
            v as i128
        }
    };
    let mut d = c;
    for k in 0..lanes {
        let va = lane(asel[k], signed(at));
        let vb = lane(bsel[k], signed(bt));
        let mut t = match op {
            "vadd" => va + vb,
            "vsub" => va - vb,
            "vavrg" => {
                if va + vb >= 0 {
                    (va + vb + 1) >> 1
                } else {
                    (va + vb) >> 1
                }
            }
            "vabsdiff" => (va - vb).abs(),
            "vmin" => va.min(vb),
            "vmax" => va.max(vb),
            "vset" => {
                let c = f.mods.iter().find(|m| cmp_name(m)).unwrap();
                cmp(c, va, vb) as i128
            }
            _ => panic!("{op}"),
        };
        if has("sat") {
            t = clamp(t, signed(dt), bits);
        }
        if !mask[k] {
            continue;
        }
        if has("add") {
            d = d.wrapping_add(t as u32);
        } else {
            let m = ((1u64 << bits) - 1) as u32;
            let pos = k as u32 * bits;
            d = d & !(m << pos) | (t as u32 & m) << pos;
        }
    }
    d as u64
}

// ---- One test per construct. ----

#[test]
fn bfe_bfi_b64() {
    check(
        "bfe_bfi_b64",
        &[
            "bfe.u64 D, %x, %a, %b",
            "bfe.s64 D, %x, %a, %b",
            "bfe.u64 D, %y, %c, %e",
            "bfe.s64 D, %y, %e, %c",
            "bfe.s64 D, %x, 60, 8",
            "bfe.u64 D, %x, 255, 255",
            "bfe.s64 D, %x, 0, 64",
            "bfe.s64 D, %x, 63, 1",
            "bfi.b64 D, %x, %y, %a, %b",
            "bfi.b64 D, %y, %x, %c, %e",
            "bfi.b64 D, %x, %y, 32, 32",
            "bfi.b64 D, %x, %y, 63, 255",
            "bfi.b64 D, %x, %y, 0, 64",
        ],
        6,
    );
}

/// `bfi.b64 d, a, b, 32, 32` (nvcc's way of joining two words) and `bfi.b64 d, a, b, 0, 32`
/// are word moves: no masking (`LOP`) of the 64-bit operands.
#[test]
fn bfi_b64_word_pair() {
    let sass = check(
        "bfi_b64_word_pair",
        &[
            "bfi.b64 D, %x, %y, 32, 32",
            "bfi.b64 D, %y, %x, 32, 200",
            "bfi.b64 D, %x, %y, 0, 32",
            "bfi.b64 D, %x, %y, 288, 32",
        ],
        4,
    );
    assert!(!sass.contains("LOP"), "{sass}");
}

/// bfe/bfi positions and lengths drawn from the 64-bit inputs (so 0, 63, 64, 255, 256...).
#[test]
fn bfe_bfi_b64_edges() {
    check(
        "bfe_bfi_b64_edges",
        &[
            "bfe.u64 D, %x, %f, %a",
            "bfe.s64 D, %x, %a, %f",
            "bfe.s64 D, %x, %f, %f",
            "bfi.b64 D, %x, %y, %f, %b",
            "bfi.b64 D, %x, %y, %a, %f",
        ],
        6,
    );
}

/// `clz`, `popc`, `brev`, `bfind` on 64 bits (built from the 32-bit operations on the words).
#[test]
fn bits_b64() {
    check(
        "bits_b64",
        &[
            "clz.b64 D, %x",
            "clz.b64 D, %y",
            "popc.b64 D, %x",
            "brev.b64 D, %x",
            "brev.b64 D, %y",
            "bfind.u64 D, %x",
            "bfind.s64 D, %y",
            "bfind.shiftamt.u64 D, %y",
        ],
        6,
    );
}

#[test]
fn vadd() {
    check(
        "vadd",
        &[
            "vadd.u32.u32.u32 D, %a, %b",
            "vadd.s32.s32.s32.sat D, %a, %b",
            "vadd.u32.s32.u32.sat D, %a, %b",
            "vadd.s32.u32.s32.sat.add D, %a.b1, %b.h1, %c",
            "vadd.u32.u32.u32.min D, %a.b3, %b.b0, %c",
            "vadd.s32.s32.s32.max D, %a.h0, %b.h1, %c",
            "vadd.u32.u32.s32.max D, %a, %b, %c",
            "vadd.u32.u32.u32.sat D.b2, %a.b1, %b.b2, %c",
            "vadd.s32.s32.s32.sat D.h1, %a.h1, %b.h0, %c",
            "vadd.u32.u32.u32.sat D.b3, %a, %b, %c",
        ],
        4,
    );
}

#[test]
fn vsub() {
    check(
        "vsub",
        &[
            "vsub.u32.u32.u32 D, %a, %b",
            "vsub.u32.u32.u32.sat D, %a, %b",
            "vsub.s32.u32.u32.sat D, %a, %b",
            "vsub.s32.s32.u32.sat.min D, %a.b0, %b.h0, %c",
            "vsub.s32.s32.s32.sat D.b0, %a, %b, %c",
            "vsub.u32.s32.s32.add D, %a.h1, %b, %c",
        ],
        4,
    );
}

#[test]
fn vabsdiff() {
    check(
        "vabsdiff",
        &[
            "vabsdiff.u32.u32.u32 D, %a, %b",
            "vabsdiff.s32.s32.s32 D, %a, %b",
            "vabsdiff.s32.s32.s32.sat D, %a, %b",
            "vabsdiff.u32.s32.u32 D, %a, %b",
            "vabsdiff.u32.s32.s32.min D, %a.b2, %b, %c",
            "vabsdiff.u32.u32.u32.add D, %a.b0, %b.b0, %c",
            "vabsdiff.s32.u32.s32.sat D.h0, %a.h1, %b.b3, %c",
        ],
        4,
    );
}

#[test]
fn vmin_vmax() {
    check(
        "vmin_vmax",
        &[
            "vmin.s32.s32.s32 D.b1, %a, %b, %c",
            "vmin.u32.s32.u32 D, %a, %b",
            "vmin.u32.u32.u32 D, %a, %b",
            "vmin.s32.u32.s32.sat.max D, %a.h1, %b.b3, %c",
            "vmax.u32.u32.u32 D, %a, %b",
            "vmax.s32.s32.s32 D, %a, %b",
            "vmax.s32.s32.s32.add D, %a.h0, %b.h1, %c",
            "vmax.u32.s32.s32.sat D.h0, %a.b1, %b.b2, %c",
            "vmax.u32.u32.s32.sat D, %a, %b",
        ],
        4,
    );
}

#[test]
fn vset() {
    check(
        "vset",
        &[
            "vset.u32.s32.lt D, %a, %b",
            "vset.u32.u32.lt D, %a, %b",
            "vset.s32.s32.ge D, %a.b1, %b.b1",
            "vset.u32.u32.eq D, %a.h0, %b.h1",
            "vset.u32.u32.ne.add D, %a, %b, %c",
            "vset.s32.u32.gt.min D, %a.b3, %b.b0, %c",
            "vset.s32.s32.le.max D, %a, %b, %c",
            "vset.u32.u32.lt D.b2, %a.b0, %b.b0, %c",
            "vset.s32.u32.ge D, %a, %b",
            "vset.u32.s32.eq.add D, %a, %b, %c",
            "vset.s32.u32.ne D, %a, %b",
            "vset.u32.s32.le D, %a, %b",
            "vset.s32.u32.gt D, %a, %b",
            "vset.s32.s32.lt D, %a, %b",
        ],
        4,
    );
}

#[test]
fn vshl() {
    check(
        "vshl",
        &[
            "vshl.u32.u32.u32.clamp D, %a, %b",
            "vshl.u32.u32.u32.wrap D, %a, %b",
            "vshl.s32.s32.u32.clamp.sat D, %a, %b",
            "vshl.u32.s32.u32.clamp.sat D, %a, %b",
            "vshl.u32.u32.u32.clamp.sat D, %a.b0, %b",
            "vshl.u32.u32.u32.wrap.add D, %a.h1, %b.b0, %c",
            "vshl.s32.s32.u32.clamp.sat D.h1, %a, %b.b0, %c",
        ],
        4,
    );
}

#[test]
fn vshr() {
    check(
        "vshr",
        &[
            "vshr.u32.u32.u32.clamp D, %a, %b",
            "vshr.s32.s32.u32.clamp D, %a, %b",
            "vshr.s32.s32.u32.wrap.max D, %a.b3, %b, %c",
            "vshr.u32.s32.u32.clamp.sat D, %a, %b",
            "vshr.u32.u32.u32.clamp.add D, %a, 32, %c",
            "vshr.s32.u32.u32.clamp.sat D.b1, %a, %b.b2, %c",
        ],
        4,
    );
}

#[test]
fn vmad() {
    check(
        "vmad",
        &[
            "vmad.u32.u32.u32 D, %a, %b, %c",
            "vmad.s32.s32.s32 D, %a, %b, %c",
            "vmad.s32.u32.s32 D, %a.h1, %b.b0, %c",
            "vmad.u32.u32.u32.po D, %a.b1, %b.b2, %c",
            "vmad.s32.s32.u32.shr7 D, %a, %b, %c",
            "vmad.u32.u32.u32.po.shr15 D, %a, %b.h0, %c",
            "vmad.u32.s32.s32.shr15 D, %a.h1, %b, %c",
            "vmad.u32.u32.u32.sat D, %a, %b, %c",
            "vmad.s32.s32.s32.sat D, %a, %b, %c",
            "vmad.s32.u32.u32.sat.shr7 D, %a, %b, %c",
            "vmad.u32.u32.u32.sat D, -%a, %b, %c",
            "vmad.s32.s32.s32 D, %a, -%b.h1, %c",
            "vmad.s32.s32.s32.sat D, %a, %b, -%c",
            "vmad.u32.u32.u32 D, -%a, -%b, %c",
            "vmad.s32.s32.s32.po.sat.shr15 D, %a, %b, %c",
            "vmad.u32.u32.u32.shr7 D, %a.b3, -%b.b1, %c",
        ],
        4,
    );
}

#[test]
fn vadd2_vadd4() {
    check(
        "vadd2_vadd4",
        &[
            "vadd2.u32.u32.u32 D, %a, %b, %c",
            "vadd2.s32.s32.s32.sat D, %a, %b, %c",
            "vadd2.u32.s32.u32.sat D.h1, %a.h01, %b.h23, %c",
            "vadd2.u32.u32.u32.add D, %a, %b, %c",
            "vadd4.u32.u32.u32.sat D, %a, %b, %c",
            "vadd4.s32.s32.s32.sat D.b20, %a, %b, %c",
            "vadd4.u32.u32.u32.add D, %a.b0123, %b.b4444, %c",
        ],
        4,
    );
}

#[test]
fn vsub2_vsub4() {
    check(
        "vsub2_vsub4",
        &[
            "vsub2.s32.s32.s32.add D.h0, %a.h11, %b.h30, %c",
            "vsub2.u32.u32.u32.sat D, %a, %b, %c",
            "vsub4.s32.s32.s32.add D, %a, %b, %c",
            "vsub4.u32.s32.s32.sat D.b31, %a, %b.b7250, %c",
        ],
        4,
    );
}

#[test]
fn vavrg2_vavrg4() {
    check(
        "vavrg2_vavrg4",
        &[
            "vavrg2.s32.s32.s32 D, %a, %b, %c",
            "vavrg2.u32.u32.u32 D.h0, %a, %b.h02, %c",
            "vavrg2.s32.u32.s32.add D, %a, %b, %c",
            "vavrg4.u32.u32.u32 D, %a, %b, %c",
            "vavrg4.s32.s32.s32 D.b1, %a, %b, %c",
            "vavrg4.u32.s32.s32.sat D, %a, %b, %c",
        ],
        4,
    );
}

#[test]
fn vabsdiff2_vabsdiff4() {
    let sass = check(
        "vabsdiff2_vabsdiff4",
        &[
            "vabsdiff2.s32.s32.s32.add D, %a, %b, %c",
            "vabsdiff2.u32.s32.s32.sat D, %a, %b, %c",
            "vabsdiff4.s32.s32.s32.add D, %a, %b, %c",
            "vabsdiff4.u32.u32.u32.sat D, %a, %b, %c",
            "vabsdiff4.u32.u32.u32.add D.b21, %a, %b, %c",
            "vabsdiff4.u32.u32.u32 D, %a.b0123, %b, %c",
        ],
        4,
    );
    // None of these has VABSDIFF4's shape (see vabsdiff4_native).
    assert!(!sass.contains("VABSDIFF4"), "{sass}");
}

/// `vabsdiff4` with `.u32` result and `b`, default selectors, all lanes and no `.sat` is
/// ptxas's native `VABSDIFF4` (`.ACC` for `.add`, `.S8` for an `.s32` `a`); the other forms
/// are split into byte lanes.
#[test]
fn vabsdiff4_native() {
    let sass = check(
        "vabsdiff4_native",
        &[
            "vabsdiff4.u32.u32.u32.add D, %a, %b, %c",
            "vabsdiff4.u32.s32.u32.add D, %a, %b, %c",
            "vabsdiff4.u32.u32.u32 D, %a, %b, %c",
            "vabsdiff4.u32.s32.u32 D, %a.b3210, %b.b7654, %c",
            "vabsdiff4.u32.u32.u32.add D.b3210, %e, %b, %a",
        ],
        6,
    );
    let count = |m: &str| sass.lines().filter(|l| l.contains(m)).count();
    assert_eq!(count("VABSDIFF4.U8.U8.ACC "), 2, "{sass}");
    assert_eq!(count("VABSDIFF4.S8.U8.ACC "), 1, "{sass}");
    assert_eq!(count("VABSDIFF4.U8.U8 "), 1, "{sass}");
    assert_eq!(count("VABSDIFF4.S8.U8 "), 1, "{sass}");
}

#[test]
fn vmin2_vmax4() {
    check(
        "vmin2_vmax4",
        &[
            "vmin2.s32.s32.s32 D, %a, %b, %c",
            "vmax2.u32.u32.u32.add D, %a, %b, %c",
            "vmax2.s32.u32.s32.sat D, %a, %b, %c",
            "vmin4.u32.u32.u32 D, %a, %b, %c",
            "vmax4.s32.s32.s32 D.b20, %a, %b, %c",
            "vmin4.s32.s32.s32.add D.b3210, %a, %b, %c",
            "vmax4.u32.s32.u32.sat D, %a, %b, %c",
        ],
        4,
    );
}

#[test]
fn vset2_vset4() {
    check(
        "vset2_vset4",
        &[
            "vset2.s32.s32.lt D, %a, %b, %c",
            "vset2.u32.u32.ne.add D, %a, %b, %c",
            "vset2.u32.s32.ge D.h1, %a.h20, %b, %c",
            "vset4.u32.u32.ne D, %a, %b, %c",
            "vset4.s32.s32.ge.add D, %a, %b, %c",
            "vset4.s32.u32.lt D.b0, %a, %b, %c",
            "vset4.u32.u32.eq.add D.b31, %a.b4567, %b, %c",
        ],
        4,
    );
}

/// The video opcodes (and `PRMT`s) of a listing, sorted: the shape ptxas and we must share.
fn video_ops(listing: &str) -> Vec<String> {
    let mut v: Vec<String> = common::parse_lines(listing)
        .into_iter()
        .filter_map(|(_, t)| {
            let t = t.trim_start_matches('{').trim();
            let t = if t.starts_with('@') {
                t.split_once(' ')?.1
            } else {
                t
            };
            let op = t.split([' ', '.']).next()?.to_string();
            (op.starts_with('V') || op == "PRMT").then_some(op)
        })
        .collect();
    v.sort();
    v
}

/// The video instructions' mnemonics with their modifiers, sorted.
fn video_mnemonics(listing: &str) -> Vec<String> {
    let mut v: Vec<String> = common::parse_lines(listing)
        .into_iter()
        .filter_map(|(_, t)| {
            let t = t.trim_start_matches('{').trim();
            let m = t.split(' ').next()?.to_string();
            m.starts_with('V').then_some(m)
        })
        .collect();
    v.sort();
    v
}

/// Each scalar form is ptxas 11.8's one native instruction (a `.b1`/`.b3` merge: a `.b0`
/// merge and a `PRMT`, as ptxas writes it): our opcodes equal this table, and with the oracle,
/// equal ptxas's for the same kernel, modifiers included (`VADD.UD.U8.U16.ACC`, ...).
#[test]
fn scalar_forms_are_native_as_ptxas() {
    let table: &[(&str, &[&str])] = &[
        ("vadd.u32.u32.u32 D, %a, %b", &["VADD"]),
        ("vadd.s32.s32.s32.sat D, %a, %b", &["VADD"]),
        ("vadd.u32.u32.u32.add D, %a.b1, %b.h1, %c", &["VADD"]),
        ("vadd.s32.u32.s32.min D, %a.b2, %b, %c", &["VADD"]),
        ("vadd.u32.s32.u32.max D, %a, %b.b3, %c", &["VADD"]),
        ("vadd.u32.u32.u32 D.b1, %a, %b, %c", &["PRMT", "VADD"]),
        ("vadd.u32.u32.u32 D.b3, %a, %b, %c", &["PRMT", "VADD"]),
        ("vadd.u32.u32.u32.sat D.b0, %a, %b, %c", &["VADD"]),
        ("vadd.s32.s32.s32 D.h0, %a, %b, %c", &["VADD"]),
        ("vadd.u32.u32.u32 D.h1, %a, %b, %c", &["VADD"]),
        ("vsub.u32.u32.u32 D, %a, %b", &["VADD"]),
        ("vsub.s32.s32.s32.sat.add D, %a.h0, %b.b0, %c", &["VADD"]),
        ("vabsdiff.u32.u32.u32 D, %a, %b", &["VABSDIFF"]),
        ("vabsdiff.s32.s32.s32.add D, %a, %b, %c", &["VABSDIFF"]),
        ("vabsdiff.u32.s32.s32.sat D, %a.b0, %b.b1", &["VABSDIFF"]),
        ("vmin.u32.u32.u32 D, %a, %b", &["VMNMX"]),
        ("vmax.s32.s32.s32.max D, %a, %b, %c", &["VMNMX"]),
        ("vmin.s32.u32.s32.sat D, %a, %b", &["VMNMX"]),
        ("vmin.s32.s32.s32.sat D.h1, %a, %b, %c", &["VMNMX"]),
        ("vmin.u32.u32.u32 D.b1, %a, %b, %c", &["PRMT", "VMNMX"]),
        ("vshl.u32.u32.u32.clamp D, %a, %b", &["VSHL"]),
        ("vshl.u32.u32.u32.wrap D, %a, %b", &["VSHL"]),
        ("vshl.s32.s32.u32.clamp.sat D, %a, %b", &["VSHL"]),
        ("vshr.s32.s32.u32.clamp D, %a, %b", &["VSHR"]),
        ("vshr.u32.u32.u32.wrap.add D, %a, %b, %c", &["VSHR"]),
        ("vset.u32.u32.lt D, %a, %b", &["VSET"]),
        ("vset.s32.s32.ge.add D, %a, %b, %c", &["VSET"]),
        ("vset.u32.s32.ne D.b2, %a.b1, %b, %c", &["VSET"]),
        ("vset.s32.s32.lt.min D, %a, %b, %c", &["VSET"]),
        ("vset.s32.u32.gt.max D, %a, %b, %c", &["VSET"]),
        ("vset.u32.u32.eq D.h0, %a, %b, %c", &["VSET"]),
        ("vmad.u32.u32.u32 D, %a, %b, %c", &["VMAD"]),
        ("vmad.s32.s32.s32 D, %a.h1, %b.b0, %c", &["VMAD"]),
        ("vmad.s32.s32.s32.sat D, %a, %b, %c", &["VMAD"]),
        ("vmad.u32.u32.u32.sat D, %a, %b, %c", &["VMAD"]),
        ("vmad.s32.s32.s32 D, -%a, %b, %c", &["VMAD"]),
        ("vmad.s32.s32.s32 D, %a, %b, -%c", &["VMAD"]),
        ("vmad.u32.u32.u32.shr7 D, %a, %b, %c", &["VMAD"]),
        ("vmad.s32.s32.s32.po D, %a, %b, %c", &["VMAD"]),
        ("vmad.u32.s32.s32.shr15 D, %a.h0, %b.h1, %c", &["VMAD"]),
        // Constants: RZ for 0, the 16-bit immediate B for a small one (S16 for a signed b),
        // a register otherwise.
        ("vadd.u32.u32.u32 D, %a, 5", &["VADD"]),
        ("vsub.s32.s32.s32 D, %a, 3", &["VADD"]),
        ("vadd.s32.s32.s32 D, %a, 0", &["VADD"]),
        ("vadd.u32.u32.s32 D, %a, -7", &["VADD"]),
        ("vadd.u32.u32.u32 D, 4, %a", &["VADD"]),
        ("vabsdiff.s32.s32.s32 D, %a, 100", &["VABSDIFF"]),
        ("vmin.u32.u32.u32 D, %a, 100", &["VMNMX"]),
        ("vset.s32.s32.lt D, %a, 65536", &["VSET"]),
        ("vshl.u32.u32.u32.wrap D, %a, 4", &["VSHL"]),
        ("vshr.u32.u32.u32.clamp D, %a, 3", &["VSHR"]),
        ("vmad.u32.u32.u32 D, %a, 9, %c", &["VMAD"]),
        ("vmad.s32.s32.s32 D, %a.h1, 300, %c", &["VMAD"]),
    ];
    let oracle = leafold::oracle::Oracle::for_test("scalar_forms_are_native_as_ptxas");
    let mut bad = Vec::new();
    for (form, want) in table {
        let src = kernel(&[form]);
        let out = compile_checked("scalar_forms_are_native_as_ptxas", &src);
        let ours = video_ops(&out.sass);
        if ours != *want {
            bad.push(format!("`{form}`: ours {ours:?}, table {want:?}"));
        }
        if let Some(o) = &oracle {
            let cubin = common::ptxas_cached(o, &src, "sm_50").expect("ptxas takes the form");
            let listing = o.cuobjdump(&cubin, "-sass").expect("cuobjdump");
            let theirs = video_ops(&listing);
            if ours != theirs {
                bad.push(format!("`{form}`: ours {ours:?}, ptxas {theirs:?}"));
            }
            let (a, b) = (video_mnemonics(&out.sass), video_mnemonics(&listing));
            if a != b {
                bad.push(format!("`{form}`: ours {a:?}, ptxas {b:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // A constant vset operand: ptxas writes an immediate form at another opcode, which
    // nvdisasm and cuobjdump print as an `ST`; leafold puts the constant in a register.
    let src = kernel(&["vset.u32.u32.le.add D, %a, 7, %c"]);
    let out = compile_checked("scalar_forms_are_native_as_ptxas", &src);
    assert_eq!(video_ops(&out.sass), ["VSET"], "{}", out.sass);
    // And they compute what the PTX says (sim = eval = model).
    let forms: Vec<&str> = table.iter().map(|(f, _)| *f).collect();
    check("scalar_forms_native_values", &forms, 3);
}

#[test]
fn bad_selectors_are_diagnosed() {
    for (form, why) in [
        ("vadd.u32.u32.u32 D, %a.b10, %b", "selector .b10"),
        (
            "vadd.u32.u32.u32 D, %a.b9, %b",
            "unknown video selector '.b9'",
        ),
        (
            "vadd4.u32.u32.u32 D, %a.x, %b, %c",
            "unknown video selector '.x'",
        ),
        ("vset.u32.u32.lo D, %a, %b", "vset needs one of"),
        (
            "vadd2.u32.u32.u32.sat.add D, %a, %b, %c",
            "at most one of .sat, .add",
        ),
        (
            "vadd2.u32.u32.u32 D, %a.b10, %b, %c",
            "source selector .b10",
        ),
        ("vshl.u32.u32.u32 D, %a, %b", ".clamp or .wrap"),
        (
            "vmad.s32.s32.s32 D, -%a, %b, -%c",
            "vmad negates a xor b, or c",
        ),
        ("vmad.s32.s32.s32.po D, %a, %b, -%c", "no negation with .po"),
    ] {
        let src = kernel(&[form]);
        let opts = Options::default();
        let err = match compile(&src, &opts) {
            Ok(_) => panic!("`{form}` compiled"),
            Err(d) => leafold::error::render_all(&d.0),
        };
        assert!(err.contains(why) && err.contains(":18:"), "`{form}`: {err}");
    }
}
