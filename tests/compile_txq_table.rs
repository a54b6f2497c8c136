//! `txq` of the attributes ptxas 11.8 reads from the driver's texture descriptor table
//! (issue 21; `leafold::tex_table`): channel_data_type, channel_order, normalized_coords,
//! filter_mode, addr_mode_0/1/2, array_size, num_mipmap_levels, num_samples. One kernel per
//! attribute and handle kind (a module `.texref`, a texture object parameter, a texture
//! object loaded from memory); for each:
//!
//! * `ir::eval` (the texture model) equals the simulator running our SASS (which loads the
//!   word from the simulated table) on four textures whose attributes differ, and both
//!   store the model's value;
//! * the code is hazard-free and has ptxas's sequence (`LOP32I.AND 0xfffff`, the relocated
//!   `MOV32I`, `XMAD`s with the field offset in `c[0x2]`, `c[0x0][0xb0]`, `LDG.E.CI`);
//! * with the oracle: nvdisasm prints exactly our listing, the table sequence equals
//!   ptxas's (registers aside), and a kernel with every attribute has ptxas's constant
//!   bank 2, `.text` relocations and descriptor-size symbol.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;
use leafold::texture::{
    AddressMode, ChannelType, FilterMode, ReadMode, Shape, Texture, TextureBindings, TextureDesc,
    TxqQuery,
};

const OUT: u64 = 0x3000_0000;

const ATTRS: [&str; 10] = [
    "channel_data_type",
    "channel_order",
    "normalized_coords",
    "filter_mode",
    "addr_mode_0",
    "addr_mode_1",
    "addr_mode_2",
    "array_size",
    "num_mipmap_levels",
    "num_samples",
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Handle {
    Ref,
    Obj,
    Reg,
}

const HANDLES: [Handle; 3] = [Handle::Ref, Handle::Obj, Handle::Reg];

fn name(attr: &str, h: Handle) -> String {
    format!("txq_{attr}_{h:?}").to_lowercase()
}

/// One thread stores `txq.<attr>` of texture `t` / object `h` (a parameter, or loaded from
/// `out + 8`) at `out`.
fn ptx(attr: &str, h: Handle) -> String {
    let name = name(attr, h);
    let (load, t) = match h {
        Handle::Ref => ("", "t"),
        Handle::Obj => ("  ld.param.u64 %rd5, [h];\n", "%rd5"),
        Handle::Reg => ("  ld.global.u64 %rd5, [%rd1+8];\n", "%rd5"),
    };
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n\n.global .texref t;\n\n\
         .visible .entry {name}(.param .u64 out, .param .u64 h)\n{{\n\
         \x20 .reg .b32 %r<4>;\n  .reg .b64 %rd<8>;\n\
         \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n{load}\
         \x20 txq.{attr}.b32 %r1, [{t}];\n  st.global.u32 [%rd1], %r1;\n  ret;\n}}\n"
    )
}

/// Four textures whose table attributes differ.
fn texture(k: u64) -> Texture {
    let mut d = match k % 4 {
        0 => {
            let mut d = TextureDesc::new(Shape::A2, [7, 5, 1], ChannelType::F32, 4);
            d.layers = 3;
            d.sampler.filter = FilterMode::Linear;
            d.sampler.address = [AddressMode::Clamp, AddressMode::Border, AddressMode::Clamp];
            d
        }
        1 => {
            let mut d = TextureDesc::new(Shape::D3, [8, 4, 2], ChannelType::U8, 2);
            d.mip_levels = 3;
            d.sampler.normalized_coords = true;
            d.sampler.address = [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border];
            d
        }
        2 => {
            let mut d = TextureDesc::new(Shape::D2, [6, 6, 1], ChannelType::S16, 1);
            d.read_mode = ReadMode::NormalizedFloat;
            d.sampler.filter = FilterMode::Linear;
            d.sampler.normalized_coords = true;
            d.sampler.address = [AddressMode::Mirror, AddressMode::Wrap, AddressMode::Wrap];
            d
        }
        _ => {
            let mut d = TextureDesc::new(Shape::A1, [9, 1, 1], ChannelType::S32, 1);
            d.layers = 5;
            d
        }
    };
    if d.sampler.address[2] == AddressMode::Clamp && k % 4 == 0 {
        d.sampler.address[2] = AddressMode::Border;
    }
    d.validate().unwrap_or_else(|e| panic!("texture {k}: {e}"));
    Texture::random(d, k)
}

fn launch(h: Handle, tex: Texture, k: u64) -> Launch {
    let mut textures = TextureBindings::new();
    let handle = if h == Handle::Ref {
        // An object too, so the `.texref`'s header index is not the table's first.
        textures.add_object(texture(k + 1));
        textures.bind("t", tex);
        0x77
    } else {
        // A decoy first, so the handle is not 1.
        textures.add_object(texture(k + 1));
        textures.add_object(tex)
    };
    let mut l = Launch::new([1, 1, 1], [1, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.params.extend_from_slice(&handle.to_le_bytes());
    let mut bytes = vec![0xcd; 8];
    bytes.extend_from_slice(&handle.to_le_bytes());
    l.global = vec![GlobalRegion { base: OUT, bytes }];
    l.textures = textures;
    l
}

fn opts(name: &str) -> Options {
    Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    }
}

fn ours(ptx: &str, name: &str) -> leafold::driver::Output {
    compile(ptx, &opts(name))
        .unwrap_or_else(|d| panic!("{name}:\n{ptx}\n{}", leafold::error::render_all(&d.0)))
}

#[test]
fn eval_equals_simulator_and_the_model() {
    for attr in ATTRS {
        let q = TxqQuery::from_name(attr).unwrap();
        for h in HANDLES {
            let name = name(attr, h);
            let src = ptx(attr, h);
            let out = ours(&src, &name);
            let module = common::ir_module(format!("{name}.ptx"), src.clone());
            let mut seen = Vec::new();
            for k in 0..4 {
                let tex = texture(k);
                let model = tex.query(q, 0);
                let l = launch(h, tex, k);
                let want = eval::run(&module, &name, &l)
                    .unwrap_or_else(|e| panic!("{name}: ir::eval: {e}"));
                let got = sim::run_cubin(&out.cubin, &name, &l)
                    .unwrap_or_else(|e| panic!("{name}: sim: {e}\n{}", out.sass));
                assert_eq!(want.global.len(), got.global.len(), "{name}");
                assert_eq!(
                    want.region(OUT),
                    got.region(OUT),
                    "{name} {k}\n{}",
                    out.sass
                );
                let word = u32::from_le_bytes(got.region(OUT).unwrap()[..4].try_into().unwrap());
                assert_eq!(word, model, "{name} texture {k}");
                seen.push(word);
            }
            // Not vacuous: the four textures differ in every attribute but num_samples.
            seen.dedup();
            assert!(attr == "num_samples" || seen.len() > 1, "{name}: {seen:?}");
        }
    }
}

#[test]
fn code_is_hazard_free_and_is_ptxas_sequence() {
    for attr in ATTRS {
        for h in HANDLES {
            let name = name(attr, h);
            let out = ours(&ptx(attr, h), &name);
            let c = cubin::read(&out.cubin).unwrap();
            let errs = check_code(&c.kernels[0].code);
            assert!(errs.is_empty(), "{name}: {errs:#?}\n{}", out.sass);
            for want in [
                "LOP32I.AND",
                "0xfffff",
                "MOV32I",
                "XMAD.PSL.CBCC",
                "c[0x2][0x0]",
                "c[0x0][0xb0]",
                "c[0x0][0xb4]",
                "LDG.E.CI",
            ] {
                assert!(out.sass.contains(want), "{name}: no {want}\n{}", out.sass);
            }
            assert!(!out.sass.contains("TXQ"), "{name}\n{}", out.sass);
        }
    }
}

#[test]
fn level_and_sampler_attributes_get_a_diagnostic() {
    for (inst, want) in [
        (
            "txq.level.channel_order.b32 %r1, [t], 0;",
            "Illegal query modifier",
        ),
        (
            "txq.force_unnormalized_coords.b32 %r1, [t];",
            ".samplerref expected",
        ),
    ] {
        let ptx = format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.global .texref t;\n\
             .visible .entry k(.param .u64 out)\n{{\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n\
             \x20{inst}\n\
             \x20ld.param.u64 %rd1, [out];\n st.global.u32 [%rd1], %r1;\n ret;\n}}\n"
        );
        let e = compile(&ptx, &opts("bad")).unwrap_err();
        let text = leafold::error::render_all(&e.0);
        assert!(text.contains("bad.ptx:9:2"), "{text}");
        assert!(text.contains(want), "{text}");
    }
}

/// The instructions of the table load, registers and reuse flags aside, in order:
/// `LOP32I.AND`, `MOV32I`, the `XMAD`s, the `IADD`s of `c[0x0][0xb0]`, `LDG.E.CI`.
fn table_lines(listing: &str) -> Vec<String> {
    let mut v: Vec<String> = listing
        .lines()
        .filter_map(|l| {
            let ins = l.split("*/").nth(1)?.split(';').next()?.trim();
            let ins = ins.trim_start_matches('{').trim();
            let keep = ["LOP32I", "MOV32I", "XMAD", "c[0x0][0xb", "LDG.E.CI"];
            keep.iter().any(|k| ins.contains(k)).then(|| {
                let mut s = String::new();
                let mut chars = ins.chars().peekable();
                while let Some(c) = chars.next() {
                    // R12 -> R (RZ stays)
                    if c == 'R' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                        while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                            chars.next();
                        }
                    }
                    s.push(c);
                }
                s.replace(".reuse", "").replace('}', "").trim().to_string()
            })
        })
        .collect();
    v.sort();
    v
}

#[test]
fn oracle_prints_our_listing_and_ptxas_has_the_same_table_load() {
    let Some(oracle) = Oracle::for_test("compile_txq_table") else {
        return;
    };
    for attr in ATTRS {
        for h in HANDLES {
            let name = name(attr, h);
            let src = ptx(attr, h);
            let out = ours(&src, &name);
            common::assert_oracle_prints_our_listing(&oracle, &name, &out.cubin, &out.sass);
            let theirs = common::ptxas_cached(&oracle, &src, "sm_50")
                .unwrap_or_else(|e| panic!("{name}: ptxas: {e}"));
            let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
            let (t, o) = (table_lines(&listing), table_lines(&out.sass));
            assert!(t.len() >= 7, "{name}: {t:?}");
            assert_eq!(
                t, o,
                "{name}: ptxas (left) vs ours (right)\n{listing}\n{}",
                out.sass
            );
        }
    }
}

/// Constant bank 2, the `.text` relocations (symbol, type) and the descriptor-size
/// symbol (name, st_info, size, section) of a cubin's only kernel.
#[allow(clippy::type_complexity)]
fn table_meta(bytes: &[u8]) -> (Vec<u8>, Vec<(String, u32)>, Vec<(String, u8, u64, u16)>) {
    let c = cubin::read(bytes).unwrap();
    let k = &c.kernels[0];
    let relocs = c
        .relocations
        .iter()
        .filter(|r| r.target == k.text_section)
        .flat_map(|r| r.relocs.iter())
        .map(|r| (c.symbols[r.sym as usize].name.clone(), r.rtype))
        .collect();
    let syms = c
        .symbols
        .iter()
        .filter(|s| s.name.ends_with("DescSize"))
        .map(|s| (s.name.clone(), s.info, s.size, s.shndx))
        .collect();
    (k.constant2.clone().unwrap_or_default(), relocs, syms)
}

/// One kernel storing every attribute of `t1` (`t0` declared, unused) at `out + 4k`.
fn all_attrs_ptx() -> String {
    let mut body = String::new();
    for (k, attr) in ATTRS.iter().enumerate() {
        body += &format!(
            "  txq.{attr}.b32 %r1, [t1];\n  st.global.u32 [%rd1+{}], %r1;\n",
            4 * k
        );
    }
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n\n.global .texref t0;\n.global .texref t1;\n\n\
         .visible .entry all(.param .u64 out)\n{{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n\
         \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n{body}  ret;\n}}\n"
    )
}

#[test]
fn cubin_table_metadata_matches_ptxas() {
    let Some(oracle) = Oracle::for_test("compile_txq_table") else {
        return;
    };
    let src = all_attrs_ptx();
    let out = ours(&src, "all");
    let theirs = common::ptxas_cached(&oracle, &src, "sm_50").unwrap();
    let (o, t) = (table_meta(&out.cubin), table_meta(&theirs));
    assert_eq!(o.0, t.0, "constant bank 2: ours (left) vs ptxas (right)");
    assert_eq!(
        o.2, t.2,
        "descriptor-size symbol: ours (left) vs ptxas (right)"
    );
    // One MOV32I of the descriptor size for the kernel's ten queries, as ptxas: the same
    // relocations.
    assert_eq!(t.1.len(), 1);
    assert_eq!(o.1, t.1, ".text relocations: ours (left) vs ptxas (right)");
    // Not vacuous: ten field offsets.
    assert_eq!(o.0.len(), 40);
    common::assert_cuobjdump_lists_unordered(&oracle, "all", &out.cubin, &out.sass);
}

/// The listings of one attribute by each handle kind (read when accepted: the slot word or
/// the handle's low register masked to 20 bits, the relocated `MOV32I`, the field offset
/// from `c[0x2]`, the table address from `c[0x0][0xb0]`, `LDG.E.CI`).
#[test]
fn listings_snapshot() {
    let mut text = String::new();
    for h in HANDLES {
        let name = name("channel_order", h);
        let out = ours(&ptx("channel_order", h), &name);
        text += &format!("// {name}\n{}\n", out.sass);
    }
    insta::assert_snapshot!("txq_table_listings", text);
}

/// `verify` binds the texture the kernel queries (a random description) and finds the
/// reference and the simulator equal, on our code and (with the oracle) on ptxas's, whose
/// table loads the simulator resolves the same way.
#[test]
fn verify_matches_on_ours_and_ptxas() {
    let src = all_attrs_ptx();
    let mut opts = leafold::verify::VerifyOptions::default();
    opts.compile.file_name = "all.ptx".to_string();
    if let Some(oracle) = Oracle::for_test("compile_txq_table") {
        opts.ptxas_cubin = Some(common::ptxas_cached(&oracle, &src, "sm_50").unwrap());
    }
    let verdicts = leafold::verify::verify_file(&src, None, &opts)
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    assert_eq!(verdicts.len(), 1);
    for v in &verdicts {
        assert!(
            matches!(v.outcome, leafold::verify::Outcome::Match { .. }),
            "{v}"
        );
    }
}

/// Two bound `.texref`s and a texture object in one kernel: each load reads its own
/// texture's entry (the slot words hold distinct header indices).
#[test]
fn each_texture_reads_its_own_entry() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\n\
               .global .texref t0;\n.global .texref t1;\n\n\
               .visible .entry two(.param .u64 out, .param .u64 h)\n{\n\
               \x20 .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n\
               \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
               \x20 ld.param.u64 %rd2, [h];\n\
               \x20 txq.channel_data_type.b32 %r1, [t1];\n\
               \x20 txq.channel_data_type.b32 %r2, [t0];\n\
               \x20 txq.channel_data_type.b32 %r3, [%rd2];\n\
               \x20 txq.addr_mode_0.b32 %r4, [t0];\n\
               \x20 st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};\n  ret;\n}\n";
    let out = ours(src, "two");
    // One descriptor-size load for the four queries (ptxas: one per kernel).
    assert_eq!(out.sass.matches("MOV32I").count(), 1, "\n{}", out.sass);
    let module = common::ir_module("two.ptx", src.to_string());
    let l = refs_and_object_launch(["t0", "t1"], 1);
    let want = eval::run(&module, "two", &l).unwrap();
    let got = sim::run_cubin(&out.cubin, "two", &l).unwrap();
    assert_eq!(want.region(OUT), got.region(OUT), "\n{}", out.sass);
    let words: Vec<u32> = got.region(OUT).unwrap()[..16]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let ty = TxqQuery::ChannelDataType;
    assert_eq!(
        words,
        [
            texture(1).query(ty, 0),
            texture(0).query(ty, 0),
            texture(2).query(ty, 0),
            texture(0).query(TxqQuery::AddrMode0, 0),
        ]
    );
    let c = cubin::read(&out.cubin).unwrap();
    assert!(check_code(&c.kernels[0].code).is_empty());
}

/// Queries in both arms of a branch share the size the entry block loaded for an earlier
/// query (it dominates them), as ptxas's one load at the kernel's entry; both arms run
/// (eval = simulator).
#[test]
fn one_descriptor_size_for_queries_in_branches() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\n\
               .global .texref t;\n.global .texref u;\n\n\
               .visible .entry br(.param .u64 out, .param .u64 h)\n{\n\
               \x20 .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p;\n\
               \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
               \x20 ld.param.u64 %rd2, [h];\n\
               \x20 mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 8;\n  add.s64 %rd1, %rd1, %rd3;\n\
               \x20 setp.eq.u32 %p, %r1, 1;\n\
               \x20 txq.channel_order.b32 %r2, [t];\n  st.global.u32 [%rd1], %r2;\n\
               \x20 @%p bra L1;\n\
               \x20 txq.channel_data_type.b32 %r3, [u];\n  st.global.u32 [%rd1+4], %r3;\n  bra L2;\n\
               L1:\n  txq.normalized_coords.b32 %r4, [%rd2];\n  add.u32 %r4, %r4, 100;\n\
               \x20 st.global.u32 [%rd1+4], %r4;\n\
               L2:\n  ret;\n}\n";
    let out = ours(src, "br");
    assert_eq!(out.sass.matches("MOV32I").count(), 1, "\n{}", out.sass);
    let c = cubin::read(&out.cubin).unwrap();
    assert!(check_code(&c.kernels[0].code).is_empty(), "\n{}", out.sass);
    let module = common::ir_module("br.ptx", src.to_string());
    let l = refs_and_object_launch(["t", "u"], 2);
    let want = eval::run(&module, "br", &l).unwrap();
    let got = sim::run_cubin(&out.cubin, "br", &l).unwrap();
    assert_eq!(want.region(OUT), got.region(OUT), "\n{}", out.sass);
    // Not vacuous: each lane took its own arm (the second adds 100).
    let r = got.region(OUT).unwrap();
    assert_ne!(r[4..8], r[12..16]);
    if let Some(oracle) = Oracle::for_test("compile_txq_table") {
        let theirs = common::ptxas_cached(&oracle, src, "sm_50").unwrap();
        let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
        assert_eq!(listing.matches("MOV32I").count(), 1, "{listing}");
    }
}

/// A launch of `threads` threads binding `.texref`s `refs` to textures 0 and 1 and passing
/// a texture object (texture 2) as the second parameter, `out` 16 bytes.
fn refs_and_object_launch(refs: [&str; 2], threads: u32) -> Launch {
    let mut textures = TextureBindings::new();
    textures.bind(refs[0], texture(0));
    textures.bind(refs[1], texture(1));
    let handle = textures.add_object(texture(2));
    let mut l = Launch::new([1, 1, 1], [threads, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.params.extend_from_slice(&handle.to_le_bytes());
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0xcd; 16],
    }];
    l.textures = textures;
    l
}
