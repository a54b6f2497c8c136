//! The texture model (`leafold::texture`) against values computed by hand from the CUDA C++
//! Programming Guide's texture-fetching appendix: address modes, point and linear filtering
//! with 8-bit fractional weights, normalized coordinates, texel formats and normalized
//! reads, layers, cube faces, mip levels, depth compare, `tld4` order, `txq` values, and the
//! `--texture` description syntax. Property tests: filtering a constant texture returns the
//! constant, linear results stay within the footprint, weights are multiples of 1/256,
//! descriptions round-trip through `spec::format`.

use leafold::texture::spec::{self, default_desc, parse, parse_binding, parse_bindings};
use leafold::texture::*;
use proptest::prelude::*;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn lanes(v: [f32; 4]) -> [u32; 4] {
    v.map(f32::to_bits)
}

/// A 1-channel f32 texture of `shape` and `size` with texels `v` (in layout order).
fn tex_f32(shape: Shape, size: [u32; 3], v: &[f32], f: impl FnOnce(&mut TextureDesc)) -> Texture {
    let mut d = TextureDesc::new(shape, size, ChannelType::F32, 1);
    f(&mut d);
    Texture::from_bytes(d, f32_bytes(v)).expect("valid test texture")
}

fn q1(x: f32) -> SampleQuery {
    SampleQuery {
        coords: [x, 0.0, 0.0],
        ..SampleQuery::default()
    }
}

fn q2(x: f32, y: f32) -> SampleQuery {
    SampleQuery {
        coords: [x, y, 0.0],
        ..SampleQuery::default()
    }
}

/// `[10, 20, 30, 40]`.
fn ramp4(f: impl FnOnce(&mut TextureDesc)) -> Texture {
    tex_f32(Shape::D1, [4, 1, 1], &[10.0, 20.0, 30.0, 40.0], f)
}

/// A one-channel texel's result: the missing channels, alpha too, read 0 (measured on a GPU).
fn r(v: f32) -> [u32; 4] {
    lanes([v, 0.0, 0.0, 0.0])
}

/// A depth comparison's result.
fn dc(v: f32) -> [u32; 4] {
    lanes([v, 0.0, 0.0, 1.0])
}

#[test]
fn address_modes_on_indices() {
    use AddressMode::*;
    // wrap: i mod N
    assert_eq!(address(-1, 4, Wrap, true), Some(3));
    assert_eq!(address(5, 4, Wrap, true), Some(1));
    assert_eq!(address(-9, 4, Wrap, true), Some(3));
    // mirror: period 2N, the second half reversed
    assert_eq!(address(-1, 4, Mirror, true), Some(0));
    assert_eq!(address(4, 4, Mirror, true), Some(3));
    assert_eq!(address(5, 4, Mirror, true), Some(2));
    assert_eq!(address(8, 4, Mirror, true), Some(0));
    assert_eq!(address(-5, 4, Mirror, true), Some(3));
    // clamp
    assert_eq!(address(-3, 4, Clamp, false), Some(0));
    assert_eq!(address(9, 4, Clamp, true), Some(3));
    // border
    assert_eq!(address(-1, 4, Border, false), None);
    assert_eq!(address(4, 4, Border, true), None);
    assert_eq!(address(3, 4, Border, true), Some(3));
    // wrap and mirror act as clamp with unnormalized coordinates
    assert_eq!(address(5, 4, Wrap, false), Some(3));
    assert_eq!(address(-2, 4, Mirror, false), Some(0));
}

#[test]
fn point_sampling_unnormalized_clamp() {
    let t = ramp4(|_| {});
    assert_eq!(t.sample(&q1(0.0)), r(10.0));
    assert_eq!(t.sample(&q1(0.99)), r(10.0));
    assert_eq!(t.sample(&q1(1.0)), r(20.0));
    assert_eq!(t.sample(&q1(3.5)), r(40.0));
    assert_eq!(t.sample(&q1(-1.0)), r(10.0));
    assert_eq!(t.sample(&q1(7.0)), r(40.0));
    assert_eq!(t.sample(&q1(f32::INFINITY)), r(40.0));
    assert_eq!(t.sample(&q1(f32::NEG_INFINITY)), r(10.0));
    assert_eq!(
        t.sample(&q1(f32::NAN)),
        r(10.0),
        "NaN reads as coordinate 0"
    );
    // integer offset, added after scaling
    let q = SampleQuery {
        offset: [1, 0, 0],
        ..q1(1.0)
    };
    assert_eq!(t.sample(&q), r(30.0));
}

#[test]
fn point_sampling_normalized_each_mode() {
    let norm = |m: AddressMode| {
        ramp4(move |d| {
            d.sampler.normalized_coords = true;
            d.sampler.address = [m; 3];
            d.sampler.border_color = [1.0, 2.0, 3.0, 4.0];
        })
    };
    let clamp = norm(AddressMode::Clamp);
    assert_eq!(clamp.sample(&q1(0.3)), r(20.0)); // 1.2 texels
    assert_eq!(clamp.sample(&q1(1.3)), r(40.0));
    assert_eq!(clamp.sample(&q1(-0.1)), r(10.0));
    let wrap = norm(AddressMode::Wrap);
    assert_eq!(wrap.sample(&q1(1.3)), r(20.0)); // 5.2 -> 5 mod 4 = 1
    assert_eq!(wrap.sample(&q1(-0.1)), r(40.0)); // -0.4 -> -1 -> 3
    assert_eq!(wrap.sample(&q1(-1e-9)), r(40.0)); // no frac(x) = 1.0 edge
    let mirror = norm(AddressMode::Mirror);
    assert_eq!(mirror.sample(&q1(1.3)), r(30.0)); // 5 -> 2
    assert_eq!(mirror.sample(&q1(-0.1)), r(10.0)); // -1 -> 0
    assert_eq!(mirror.sample(&q1(1.0)), r(40.0)); // 4 -> 3
    let border = norm(AddressMode::Border);
    assert_eq!(border.sample(&q1(0.5)), r(30.0));
    assert_eq!(border.sample(&q1(1.3)), lanes([1.0, 2.0, 3.0, 4.0]));
    assert_eq!(border.sample(&q1(-0.01)), lanes([1.0, 2.0, 3.0, 4.0]));
}

#[test]
fn linear_filtering_1d_fixed_point_weights() {
    let t = ramp4(|d| d.sampler.filter = FilterMode::Linear);
    // texel centres are exact
    assert_eq!(t.sample(&q1(1.5)), r(20.0));
    // xB = 1.25: alpha = 64/256
    assert_eq!(t.sample(&q1(1.75)), r(22.5));
    // xB = 1.2000000477: frac * 256 = 51.2 -> 51: 20 + 10 * 51/256, not the exact 22
    assert_eq!(t.sample(&q1(1.7)), r(20.0 + 10.0 * 51.0 / 256.0));
    // frac * 256 = 0.5 exactly: rounds up to 1/256
    assert_eq!(t.sample(&q1(1.5 + 0.5 / 256.0)), r(20.0 + 10.0 / 256.0));
    // frac * 256 = 255.75 -> 256: the weight reaches 1.0 (why the format has 9 bits)
    assert_eq!(t.sample(&q1(2.5 - 0.25 / 256.0)), r(30.0));
    // below the first centre, clamp reads texel 0 twice
    assert_eq!(t.sample(&q1(0.25)), r(10.0));
    // border: texel -1 is the border colour (0), weight 64/256 (x alone: a border y mode
    // halves a 1D linear fetch, `hardware_measured_rules`)
    let b = ramp4(|d| {
        d.sampler.filter = FilterMode::Linear;
        d.sampler.normalized_coords = true;
        d.sampler.address = [AddressMode::Border, AddressMode::Clamp, AddressMode::Clamp];
    });
    assert_eq!(b.sample(&q1(0.0625)), lanes([7.5, 0.0, 0.0, 0.0]));
    // normalized wrap across the seam: x = 0 -> xB = -0.5: texels 3 and 0, half each
    let w = ramp4(|d| {
        d.sampler.filter = FilterMode::Linear;
        d.sampler.normalized_coords = true;
        d.sampler.address = [AddressMode::Wrap; 3];
    });
    assert_eq!(w.sample(&q1(0.0)), r(25.0));
    // mirror at the seam: texels -1 -> 0 and 0: 10
    let m = ramp4(|d| {
        d.sampler.filter = FilterMode::Linear;
        d.sampler.normalized_coords = true;
        d.sampler.address = [AddressMode::Mirror; 3];
    });
    assert_eq!(m.sample(&q1(0.0)), r(10.0));
}

#[test]
fn linear_filtering_2d_weights_multiply() {
    // rows y = 0: 1 2, y = 1: 3 4
    let t = tex_f32(Shape::D2, [2, 2, 1], &[1.0, 2.0, 3.0, 4.0], |d| {
        d.sampler.filter = FilterMode::Linear
    });
    assert_eq!(t.sample(&q2(1.0, 1.0)), r(2.5));
    // alpha 64, beta 192: (1·192·64 + 2·64·64 + 3·192·192 + 4·64·192) / 65536 = 2.75
    assert_eq!(t.sample(&q2(0.75, 1.25)), r(2.75));
    // point sampling of the same
    let p = tex_f32(Shape::D2, [2, 2, 1], &[1.0, 2.0, 3.0, 4.0], |_| {});
    assert_eq!(p.sample(&q2(1.9, 0.1)), r(2.0));
    assert_eq!(p.sample(&q2(0.1, 1.9)), r(3.0));
}

#[test]
fn linear_filtering_3d() {
    // 2x2x2, value = x + 2y + 4z
    let v: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let t = tex_f32(Shape::D3, [2, 2, 2], &v, |d| {
        d.sampler.filter = FilterMode::Linear
    });
    let q = SampleQuery {
        coords: [1.0, 1.0, 1.0],
        ..SampleQuery::default()
    };
    assert_eq!(t.sample(&q), r(3.5));
    // alpha = 0.25 along x only (y, z at the first centre): 0.25
    let q = SampleQuery {
        coords: [0.75, 0.5, 0.5],
        ..SampleQuery::default()
    };
    assert_eq!(t.sample(&q), r(0.25));
}

fn one_texel(ty: ChannelType, channels: u8, bytes: &[u8], read: ReadMode) -> [u32; 4] {
    let mut d = TextureDesc::new(Shape::D1, [1, 1, 1], ty, channels);
    d.read_mode = read;
    let t = Texture::from_bytes(d, bytes.to_vec()).unwrap();
    t.sample(&q1(0.0))
}

#[test]
fn channel_formats_and_normalized_reads() {
    use ChannelType::*;
    use ReadMode::*;
    assert_eq!(
        one_texel(U8, 4, &[1, 200, 3, 255], ElementType),
        [1, 200, 3, 255]
    );
    assert_eq!(
        one_texel(U8, 4, &[0, 255, 51, 128], NormalizedFloat),
        lanes([0.0, 1.0, 0.2, 128.0 / 255.0])
    );
    assert_eq!(
        one_texel(S8, 1, &[0x80], ElementType),
        [0xffff_ff80, 0, 0, 0]
    );
    assert_eq!(
        one_texel(S8, 4, &[0x80, 0x81, 127, 64], NormalizedFloat),
        lanes([-1.0, -1.0, 1.0, 64.0 / 127.0])
    );
    assert_eq!(
        one_texel(U16, 2, &[0xff, 0xff, 0x34, 0x12], ElementType),
        [0xffff, 0x1234, 0, 0]
    );
    assert_eq!(
        one_texel(U16, 2, &[0xff, 0xff, 0, 0x80], NormalizedFloat),
        lanes([1.0, 32768.0 / 65535.0, 0.0, 0.0])
    );
    assert_eq!(
        one_texel(S16, 2, &[0, 0x80, 0xff, 0x7f], NormalizedFloat),
        lanes([-1.0, 1.0, 0.0, 0.0])
    );
    assert_eq!(
        one_texel(S16, 1, &[0xfe, 0xff], ElementType),
        [(-2i32) as u32, 0, 0, 0]
    );
    assert_eq!(
        one_texel(U32, 1, &0xdead_beefu32.to_le_bytes(), ElementType),
        [0xdead_beef, 0, 0, 0]
    );
    assert_eq!(
        one_texel(S32, 1, &(-5i32).to_le_bytes(), ElementType),
        [(-5i32) as u32, 0, 0, 0]
    );
    // f16: 1.0, -2.0, 0.333251953125, the smallest subnormal
    let h: Vec<u8> = [0x3c00u16, 0xc000, 0x3555, 0x0001]
        .iter()
        .flat_map(|h| h.to_le_bytes())
        .collect();
    assert_eq!(
        one_texel(F16, 4, &h, ElementType),
        lanes([1.0, -2.0, 1365.0 / 4096.0, 2f32.powi(-24)])
    );
    assert_eq!(
        one_texel(F32, 2, &f32_bytes(&[1.5, -0.25]), ElementType),
        lanes([1.5, -0.25, 0.0, 0.0])
    );
    assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
    assert!(f16_to_f32(0x7e00).is_nan());
    assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000);
    assert_eq!(f16_to_f32(0x7bff), 65504.0);
    assert_eq!(f16_to_f32(0x0400), 2f32.powi(-14));
}

#[test]
fn result_kinds() {
    use ChannelType::*;
    let kind = |ty, read| {
        let mut d = TextureDesc::new(Shape::D2, [4, 4, 1], ty, 1);
        d.read_mode = read;
        d.result_kind()
    };
    assert_eq!(kind(F16, ReadMode::ElementType), ResultKind::Float);
    assert_eq!(kind(U8, ReadMode::NormalizedFloat), ResultKind::Float);
    assert_eq!(kind(U8, ReadMode::ElementType), ResultKind::Unsigned);
    assert_eq!(kind(S16, ReadMode::ElementType), ResultKind::Signed);
    assert_eq!(ResultKind::from_ptx_type(".f32"), Some(ResultKind::Float));
    assert_eq!(ResultKind::from_ptx_type("u32"), Some(ResultKind::Unsigned));
    assert_eq!(ResultKind::from_ptx_type(".s32"), Some(ResultKind::Signed));
    assert_eq!(ResultKind::from_ptx_type(".b32"), None);
    let d = parse("a2d:8x4,u8x4,nfloat,layers=3").unwrap();
    assert_eq!(
        d.to_string(),
        "a2d:8x4,u8x4,clamp,point,unnorm,nfloat,layers=3"
    );
}

#[test]
fn integer_results_are_point_sampled() {
    // a description CUDA refuses (linear + element reads of integers) still samples: point
    let mut d = TextureDesc::new(Shape::D1, [2, 1, 1], ChannelType::U8, 1);
    d.sampler.filter = FilterMode::Linear;
    assert!(d.validate().is_err());
    let t = Texture {
        desc: d,
        data: vec![7, 9],
    };
    assert_eq!(t.sample(&q1(1.2)), [9, 0, 0, 0]);
    assert_eq!(t.sample(&q1(0.9)), [7, 0, 0, 0]);
}

#[test]
fn layers_select_and_clamp() {
    // a1d: 3 layers of 2 texels: layer l holds 10l, 10l + 1
    let t = tex_f32(
        Shape::A1,
        [2, 1, 1],
        &[0.0, 1.0, 10.0, 11.0, 20.0, 21.0],
        |d| d.layers = 3,
    );
    let q = |layer, x| SampleQuery { layer, ..q1(x) };
    assert_eq!(t.sample(&q(1, 1.5)), r(11.0));
    assert_eq!(t.sample(&q(2, 0.5)), r(20.0));
    assert_eq!(t.sample(&q(-5, 1.5)), r(1.0));
    assert_eq!(t.sample(&q(9, 0.5)), r(20.0));
    // a2d: 2 layers of 2x1
    let t = tex_f32(Shape::A2, [2, 1, 1], &[1.0, 2.0, 3.0, 4.0], |d| {
        d.layers = 2
    });
    let q = SampleQuery {
        layer: 1,
        ..q2(1.5, 0.5)
    };
    assert_eq!(t.sample(&q), r(4.0));
    assert_eq!(t.query(TxqQuery::ArraySize, 0), 2);
    assert_eq!(t.fetch([0, 0, 0, 1], 0), r(3.0));
    assert_eq!(t.fetch([0, 0, 0, 2], 0), [0; 4]);
}

#[test]
fn cube_face_selection() {
    assert_eq!(cube_face([1.0, 0.0, 0.0]), (0, [0.5, 0.5]));
    assert_eq!(cube_face([1.0, 0.5, -0.5]), (0, [0.75, 0.25]));
    assert_eq!(cube_face([-1.0, 0.5, 0.5]), (1, [0.75, 0.25]));
    assert_eq!(cube_face([0.2, 2.0, -1.0]), (2, [0.55, 0.25]));
    assert_eq!(cube_face([0.2, -2.0, -1.0]), (3, [0.55, 0.75]));
    assert_eq!(cube_face([0.5, 0.5, 1.0]), (4, [0.75, 0.25]));
    assert_eq!(cube_face([0.5, 0.5, -1.0]), (5, [0.25, 0.25]));
    // ties: z before y before x
    assert_eq!(cube_face([1.0, 1.0, 1.0]).0, 4);
    assert_eq!(cube_face([1.0, -1.0, 0.5]).0, 3);
}

#[test]
fn cube_sampling_reads_the_face() {
    // 2x2 faces: texel value = 10 · face + index in the face
    let v: Vec<f32> = (0..6)
        .flat_map(|f| (0..4).map(move |i| (10 * f + i) as f32))
        .collect();
    let t = tex_f32(Shape::Cube, [2, 2, 1], &v, |_| {});
    let q = |c: [f32; 3]| SampleQuery {
        coords: c,
        ..SampleQuery::default()
    };
    // +x at (s, t) = (0.75, 0.25): texel (1, 0)
    assert_eq!(t.sample(&q([1.0, 0.5, -0.5])), r(1.0));
    // -z at (0.25, 0.75): texel (0, 1) of face 5
    assert_eq!(t.sample(&q([0.5, -0.5, -1.0])), r(52.0));
    // cube arrays: layer 1's +y face is face 8
    let v: Vec<f32> = (0..12)
        .flat_map(|f| (0..4).map(move |i| (10 * f + i) as f32))
        .collect();
    let a = tex_f32(Shape::ACube, [2, 2, 1], &v, |d| d.layers = 2);
    let qa = SampleQuery {
        coords: [-0.5, 1.0, 0.5],
        layer: 1,
        ..SampleQuery::default()
    };
    // +y: s = x -> 0.25, t = z -> 0.75: texel (0, 1)
    assert_eq!(a.sample(&qa), r(82.0));
}

#[test]
fn gather_order_is_counter_clockwise_from_lower_left() {
    // 4x4, value = 10y + x, two channels (g = -value)
    let v: Vec<f32> = (0..16)
        .flat_map(|i| {
            let val = (10 * (i / 4) + i % 4) as f32;
            [val, -val]
        })
        .collect();
    let mut d = TextureDesc::new(Shape::D2, [4, 4, 1], ChannelType::F32, 2);
    d.sampler.address = [AddressMode::Clamp; 3];
    let t = Texture::from_bytes(d, f32_bytes(&v)).unwrap();
    // (1.5, 1.5): i = j = 1
    assert_eq!(t.gather(0, &q2(1.5, 1.5)), lanes([21.0, 22.0, 12.0, 11.0]));
    assert_eq!(
        t.gather(1, &q2(1.5, 1.5)),
        lanes([-21.0, -22.0, -12.0, -11.0])
    );
    // missing channels read 0, alpha too (measured on a GPU)
    assert_eq!(t.gather(2, &q2(1.5, 1.5)), [0; 4]);
    assert_eq!(t.gather(3, &q2(1.5, 1.5)), [0; 4]);
    // at the corner, clamp repeats texel (0, 0)
    assert_eq!(t.gather(0, &q2(0.2, 0.2)), lanes([0.0, 0.0, 0.0, 0.0]));
    assert_eq!(t.gather(0, &q2(3.9, 0.2)), lanes([3.0, 3.0, 3.0, 3.0]));
    // offsets move the footprint
    let q = SampleQuery {
        offset: [1, 1, 0],
        ..q2(1.5, 1.5)
    };
    assert_eq!(t.gather(0, &q), lanes([32.0, 33.0, 23.0, 22.0]));
    // depth compare, where the sampler compares: 15 <= texel
    let q = SampleQuery {
        depth_ref: Some(15.0),
        ..q2(1.5, 1.5)
    };
    let mut le = t.desc.sampler;
    le.compare = CompareFunc::LessEqual;
    assert_eq!(t.gather_with(&le, 0, &q), lanes([1.0, 1.0, 0.0, 0.0]));
    // by default it does not: the reference is ignored
    assert_eq!(t.gather(0, &q), t.gather(0, &q2(1.5, 1.5)));
}

#[test]
fn fetch_integer_coordinates() {
    let v: Vec<f32> = (0..16).map(|i| (10 * (i / 4) + i % 4) as f32).collect();
    let t = tex_f32(Shape::D2, [4, 4, 1], &v, |d| {
        d.sampler.address = [AddressMode::Wrap; 3];
        d.sampler.normalized_coords = true;
    });
    assert_eq!(t.fetch([2, 1, 0, 0], 0), r(12.0));
    assert_eq!(t.fetch([3, 3, 0, 0], 0), r(33.0));
    // out of range reads zero, whatever the address mode
    assert_eq!(t.fetch([4, 0, 0, 0], 0), [0; 4]);
    assert_eq!(t.fetch([-1, 0, 0, 0], 0), [0; 4]);
    assert_eq!(t.fetch([0, 4, 0, 0], 0), [0; 4]);
    assert_eq!(t.fetch([0, 0, 0, 0], 1), [0; 4]);
    assert_eq!(t.fetch([0, 0, 0, 0], -1), [0; 4]);
    // 1D ignores the other coordinates
    let l = ramp4(|_| {});
    assert_eq!(l.fetch([3, 99, -7, 5], 0), r(40.0));
    // integer texels come back as integers
    let d = TextureDesc::new(Shape::D1, [2, 1, 1], ChannelType::S8, 1);
    let t = Texture::from_bytes(d, vec![5, 0xfb]).unwrap();
    assert_eq!(t.fetch([1, 0, 0, 0], 0), [(-5i32) as u32, 0, 0, 0]);
}

/// 4x4 with 3 levels; level l holds 100 (l + 1) everywhere.
fn mipped(mip_filter: FilterMode) -> Texture {
    let mut d = TextureDesc::new(Shape::D2, [4, 4, 1], ChannelType::F32, 1);
    d.mip_levels = 3;
    d.sampler.normalized_coords = true;
    d.sampler.mip_filter = mip_filter;
    let mut v = vec![100.0; 16];
    v.extend([200.0; 4]);
    v.push(300.0);
    Texture::from_bytes(d, f32_bytes(&v)).unwrap()
}

#[test]
fn mip_levels() {
    let t = mipped(FilterMode::Point);
    assert_eq!(t.desc.byte_len(), (16 + 4 + 1) * 4);
    assert_eq!(t.desc.level_offset(2), 20 * 4);
    let at = |lod| SampleQuery {
        lod,
        ..q2(0.5, 0.5)
    };
    assert_eq!(t.sample(&at(Lod::Base)), r(100.0));
    assert_eq!(t.sample(&at(Lod::Level(1.0))), r(200.0));
    assert_eq!(t.sample(&at(Lod::Level(0.4))), r(100.0));
    assert_eq!(t.sample(&at(Lod::Level(0.6))), r(200.0));
    assert_eq!(t.sample(&at(Lod::Level(5.0))), r(300.0));
    assert_eq!(t.sample(&at(Lod::Level(-3.0))), r(100.0));
    // gradients: 0.5 of a normalized unit = 2 texels of level 0 -> lod 1
    let g = |dx: f32| {
        at(Lod::Grad {
            dx: [dx, 0.0, 0.0],
            dy: [0.0, dx / 2.0, 0.0],
        })
    };
    assert_eq!(t.sample(&g(0.5)), r(200.0));
    assert_eq!(t.sample(&g(1.0 / 16.0)), r(100.0));
    assert_eq!(t.sample(&g(1.0)), r(300.0));
    let l = mipped(FilterMode::Linear);
    assert_eq!(l.sample(&at(Lod::Level(0.5))), r(150.0));
    assert_eq!(l.sample(&at(Lod::Level(1.25))), r(225.0));
    // integer fetch by level
    assert_eq!(t.fetch([1, 1, 0, 0], 1), r(200.0));
    assert_eq!(t.fetch([2, 0, 0, 0], 1), [0; 4]);
    assert_eq!(t.fetch([0, 0, 0, 0], 2), r(300.0));
}

/// A description may give a mipmapped texture an unnormalized wrap or mirror sampler, as the
/// CUDA driver makes one: the GPU reads its coordinates as normalized and clamps them
/// (held-out case 16). Texel (x, y) of level l holds 100 l + 10 y + x.
#[test]
fn unnormalized_wrap_and_mirror_on_mipmapped_textures() {
    // 6x3, then 3x1, then 1x1.
    let mut v: Vec<f32> = Vec::new();
    for (l, (w, h)) in [(6, 3), (3, 1), (1, 1)].into_iter().enumerate() {
        for y in 0..h {
            for x in 0..w {
                v.push((100 * l + 10 * y + x) as f32);
            }
        }
    }
    let texture = |text: &str| Texture::from_bytes(parse(text).unwrap(), f32_bytes(&v)).unwrap();
    let at = |x: f32, y: f32, level: f32| SampleQuery {
        lod: Lod::Level(level),
        ..q2(x, y)
    };
    let mirror = texture("2d:6x3,f32,mips=3,mirror");
    let wrap = texture("2d:6x3,f32,mips=3,wrap");
    let norm_mirror = texture("2d:6x3,f32,mips=3,mirror,norm");
    let norm_wrap = texture("2d:6x3,f32,mips=3,wrap,norm");
    assert!(!mirror.desc.sampler.normalized_coords);
    for t in [&mirror, &wrap] {
        // Inside: x 0.5 of 6 is texel 3, y 0.5 of 3 is row 1.
        assert_eq!(t.sample(&at(0.5, 0.5, 0.0)), r(13.0));
        // x 1.25 is texel 7.5 and y 2.0 row 6: clamped to texel 5, row 2.
        assert_eq!(t.sample(&at(1.25, 2.0, 0.0)), r(25.0));
        // x -0.3 clamps to texel 0.
        assert_eq!(t.sample(&at(-0.3, 0.5, 0.0)), r(10.0));
        // Level 1 (3x1): x 1.5 is texel 4.5, clamped to 2.
        assert_eq!(t.sample(&at(1.5, 0.5, 1.0)), r(102.0));
    }
    // The same fetches with normalized coordinates mirror (texel 7 of 6 reads 4, row 6 of
    // 3 reads row 0) and wrap (texel 7 reads 1, row 6 row 0; level 1: texel 4 of 3 reads 1).
    assert_eq!(norm_mirror.sample(&at(1.25, 2.0, 0.0)), r(4.0));
    assert_eq!(norm_wrap.sample(&at(1.25, 2.0, 0.0)), r(1.0));
    assert_eq!(norm_wrap.sample(&at(1.5, 0.5, 1.0)), r(101.0));
    assert_eq!(norm_mirror.sample(&at(1.5, 0.5, 1.0)), r(101.0));
    // A 1D texture and one dimension's mode, written back as it was given.
    let d = parse("1d:8,f32,mips=2,addr0=mirror").unwrap();
    assert_eq!(parse(&spec::format(&d)).unwrap(), d);
    // One level: still refused, and the message says how to have it.
    let e = parse_binding("t=2d:6x3,f32,mips=1,wrap")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("needs normalized coordinates (`norm`) or mip levels"),
        "{e}"
    );
}

#[test]
fn depth_compare() {
    let q = |x, reference| SampleQuery {
        depth_ref: Some(reference),
        ..q1(x)
    };
    // By default (as every CUDA texture object) the sampler does not compare: the
    // reference is ignored and the texel comes back (measured on a GPU).
    let off = ramp4(|_| {});
    assert_eq!(off.sample(&q(2.0, 25.0)), r(30.0));
    assert_eq!(off.sample(&q(2.0, 25.0)), off.sample(&q1(2.0)));
    let t = ramp4(|d| d.sampler.compare = CompareFunc::LessEqual);
    assert_eq!(t.sample(&q(2.0, 25.0)), dc(1.0));
    assert_eq!(t.sample(&q(1.0, 25.0)), dc(0.0));
    let l = ramp4(|d| {
        d.sampler.filter = FilterMode::Linear;
        d.sampler.compare = CompareFunc::LessEqual;
    });
    // texels 20 and 30, half each: 0 and 1 -> 0.5
    assert_eq!(l.sample(&q(2.0, 25.0)), dc(0.5));
    let g = ramp4(|d| d.sampler.compare = CompareFunc::Greater);
    assert_eq!(g.sample(&q(1.0, 25.0)), dc(1.0));
}

#[test]
fn txq_values() {
    let mut d = TextureDesc::new(Shape::D2, [64, 32, 1], ChannelType::F16, 2);
    d.mip_levels = 3;
    d.sampler.normalized_coords = true;
    d.sampler.filter = FilterMode::Linear;
    d.sampler.address = [AddressMode::Wrap, AddressMode::Clamp, AddressMode::Border];
    let t = Texture::random(d, 1);
    use TxqQuery::{
        AddrMode0, AddrMode1, AddrMode2, ArraySize, ChannelDataType, ChannelOrder, Depth,
        ForceUnnormalizedCoords, Height, NormalizedCoords, NumMipmapLevels, NumSamples, Width,
    };
    let q = |w| t.query(w, 0);
    // A texture with no third dimension answers depth 0 (measured on an H200, session 27).
    assert_eq!((q(Width), q(Height), q(Depth)), (64, 32, 0));
    assert_eq!((t.query(Width, 1), t.query(Height, 1)), (32, 16));
    assert_eq!((t.query(Width, 2), t.query(Height, 2)), (16, 8));
    assert_eq!((t.query(Width, 3), t.query(Height, 3)), (0, 0));
    assert_eq!(q(ChannelDataType), 0x10);
    assert_eq!(q(ChannelOrder), 2);
    assert_eq!(q(NormalizedCoords), 1);
    assert_eq!(q(ForceUnnormalizedCoords), 0);
    assert_eq!(q(TxqQuery::FilterMode), 1);
    assert_eq!((q(AddrMode0), q(AddrMode1), q(AddrMode2)), (0, 3, 4));
    assert_eq!(q(ArraySize), 0);
    assert_eq!(q(NumMipmapLevels), 3);
    assert_eq!(q(NumSamples), 0);
    let p = Texture::random(default_desc(Shape::A2, ResultKind::Unsigned), 2);
    assert_eq!(p.query(ChannelDataType, 0), 0x01);
    assert_eq!(p.query(TxqQuery::FilterMode, 0), 0);
    assert_eq!(p.query(NormalizedCoords, 0), 0);
    assert_eq!(p.query(AddrMode0, 0), 3);
    assert_eq!(p.query(ArraySize, 0), 8);
    // The layers where the GPU reports them (H200, 212 generated `txq` kernels): a 2D
    // layered texture's depth, a 1D layered texture's height.
    assert_eq!((p.query(Height, 0), p.query(Depth, 0)), (p.desc.height, 8));
    let a1 = Texture::random(default_desc(Shape::A1, ResultKind::Unsigned), 3);
    assert!(a1.desc.layers > 1);
    assert_eq!(
        (a1.query(Height, 0), a1.query(Depth, 0)),
        (a1.desc.layers, 0)
    );
    assert_eq!(p.query(NumMipmapLevels, 0), 0);
    // a separate sampler's attributes
    let mut s = SamplerDesc::default();
    s.address[0] = AddressMode::Mirror;
    assert_eq!(p.query_with(&s, AddrMode0, 0), 1);
    assert_eq!(TxqQuery::from_name(".addr_mode_2"), Some(AddrMode2));
    assert_eq!(
        TxqQuery::from_name("num_mipmap_levels"),
        Some(NumMipmapLevels)
    );
    assert_eq!(TxqQuery::from_name("bogus"), None);
    let codes: Vec<u32> = ChannelType::ALL.iter().map(|c| c.cuda_format()).collect();
    assert_eq!(codes, [0x01, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x10, 0x20]);
}

#[test]
fn independent_sampler_overrides_the_texture_state() {
    let t = ramp4(|_| {});
    let s = SamplerDesc {
        filter: FilterMode::Linear,
        ..SamplerDesc::default()
    };
    assert_eq!(t.sample(&q1(1.75)), r(20.0));
    assert_eq!(t.sample_with(&s, &q1(1.75)), r(22.5));
}

#[test]
fn random_texels_are_moderate_and_reproducible() {
    for ty in [ChannelType::F32, ChannelType::F16] {
        let d = TextureDesc::new(Shape::D2, [64, 64, 1], ty, 4);
        let a = Texture::random(d.clone(), 7);
        assert_eq!(a, Texture::random(d.clone(), 7));
        assert_ne!(a.data, Texture::random(d, 8).data);
        let mut zeros = 0;
        for x in 0..64 {
            for y in 0..64 {
                let v = a.fetch([x, y, 0, 0], 0);
                for w in v {
                    let f = f32::from_bits(w);
                    assert!(f.is_finite());
                    assert!(f == 0.0 || (1.0 / 16.0..8.0).contains(&f.abs()), "{f}");
                    zeros += (f == 0.0) as u32;
                }
            }
        }
        assert!(zeros < 4 * 64 * 64 / 16, "{zeros} zeros");
    }
    let d = TextureDesc::new(Shape::D3, [4, 4, 4], ChannelType::U8, 2);
    let t = Texture::random(d.clone(), 3);
    assert_eq!(t.data.len(), 128);
    assert!(Texture::from_bytes(d, vec![0; 127])
        .unwrap_err()
        .contains("127 bytes"));
}

#[test]
fn bindings_by_name_and_handle() {
    let mut b = TextureBindings::new();
    assert!(b.is_empty());
    b.bind("tex", ramp4(|_| {}));
    let h1 = b.add_object(Texture::random(
        default_desc(Shape::D2, ResultKind::Float),
        1,
    ));
    let h2 = b.add_object(Texture::random(
        default_desc(Shape::D1, ResultKind::Float),
        2,
    ));
    assert_eq!((h1, h2), (1, 2));
    assert_eq!(b.by_name("tex").unwrap().desc.width, 4);
    assert!(b.by_name("other").is_none());
    assert_eq!(b.by_handle(2).unwrap().desc.shape, Shape::D1);
    assert!(b.by_handle(3).is_none());
    b.bind_sampler("smp", SamplerDesc::default());
    assert!(b.sampler("smp").is_some());
    assert_eq!(b.names().count(), 1);
    assert_eq!(b.objects().map(|(h, _)| h).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn spec_parses_descriptions() {
    let d = parse("2d:64x32,u8x4,nfloat,linear,norm,wrap").unwrap();
    assert_eq!(d.shape, Shape::D2);
    assert_eq!((d.width, d.height, d.depth, d.layers), (64, 32, 1, 1));
    assert_eq!((d.channel_type, d.channels), (ChannelType::U8, 4));
    assert_eq!(d.read_mode, ReadMode::NormalizedFloat);
    assert_eq!(d.sampler.filter, FilterMode::Linear);
    assert!(d.sampler.normalized_coords);
    assert_eq!(d.sampler.address, [AddressMode::Wrap; 3]);
    let d = parse("3d:8x4x2,f32").unwrap();
    assert_eq!((d.width, d.height, d.depth, d.channels), (8, 4, 2, 1));
    assert_eq!(d.sampler, SamplerDesc::default());
    let d = parse("acube:16,f16x2,layers=3,mips=5,mipfilter=linear,compare=gt,norm,border,addr1=clamp,bordercolor=1/0.5/0/-2")
        .unwrap();
    assert_eq!((d.width, d.height, d.layers, d.mip_levels), (16, 16, 3, 5));
    assert_eq!(d.sampler.mip_filter, FilterMode::Linear);
    assert_eq!(d.sampler.compare, CompareFunc::Greater);
    assert_eq!(
        d.sampler.address,
        [AddressMode::Border, AddressMode::Clamp, AddressMode::Border]
    );
    assert_eq!(d.sampler.border_color, [1.0, 0.5, 0.0, -2.0]);
    let (name, d) = parse_binding("texA=a1d:100,s16,layers=4").unwrap();
    assert_eq!(name, "texA");
    assert_eq!((d.width, d.layers), (100, 4));
    let all = parse_bindings(&["a=1d:8,f32", "b=cube:4,f32x4"]).unwrap();
    assert_eq!(all.len(), 2);
}

#[test]
fn spec_errors_say_what_is_wrong() {
    let e = |s: &str| parse_binding(s).unwrap_err().to_string();
    assert!(e("tex").contains("no `=`"), "{}", e("tex"));
    assert!(e("1x=2d:4x4,f32").contains("not a PTX identifier"));
    assert!(e("t=4d:4,f32").contains("unknown shape `4d`"));
    assert!(e("t=2d:4,f32").contains("takes WxH"));
    assert!(e("t=2d:4x0,f32").contains("`0` is not a number"));
    assert!(e("t=2d:4x4").contains("missing the texel format"));
    assert!(e("t=2d:4x4,f64").contains("unknown texel format `f64`"));
    assert!(e("t=2d:4x4,f32x3").contains("1, 2 or 4"));
    assert!(e("t=2d:4x4,f32,blur").contains("unknown option `blur`"));
    assert!(e("t=2d:4x4,f32,wrap").contains("needs normalized coordinates"));
    assert!(e("t=2d:4x4,u8,linear").contains("linear filtering needs float results"));
    assert!(e("t=2d:4x4,u32,nfloat").contains("cannot be read as normalized"));
    assert!(e("t=2d:4x4,f32,layers=2").contains("not layered"));
    assert!(e("t=2d:4x4,f32,mips=4").contains("mip levels 4"));
    assert!(e("t=2d:4x4,f32,bordercolor=1/2").contains("four numbers"));
    assert!(e("t=2d:4x4,f32,,norm").contains("empty option"));
    assert!(e("t=2d:4x4,f32,compare=lte").contains("expected off, never"));
    assert!(e("t=2d:99999x4,f32").contains("width 99999 is not in 1..=65536"));
    // 1D textures may be linear memory: up to 2^27 texels (within the model's byte bound)
    assert_eq!(parse("1d:1000000,f32").unwrap().width, 1_000_000);
    assert!(e("t=1d:200000000,u8").contains("1..=134217728"));
    assert!(e("t=1d:134217728,f32x4").contains("more than the"));
    assert!(e("t=2d:4x4,f32,addr0=repeat").contains("unknown address mode `repeat`"));
    assert!(e("t=2d:4x4,f32,foo=1").contains("unknown option `foo=`"));
    assert!(parse_bindings(&["t=1d:4,f32", "t=1d:8,f32"])
        .unwrap_err()
        .to_string()
        .contains("described twice"));
    // the error names the whole text
    assert!(e("t=2d:4x4,f64").starts_with("texture description `t=2d:4x4,f64`"));
}

#[test]
fn default_descriptions_are_valid_and_cover_launches() {
    for shape in Shape::ALL {
        for kind in [ResultKind::Float, ResultKind::Signed, ResultKind::Unsigned] {
            let d = default_desc(shape, kind);
            d.validate().unwrap();
            assert_eq!(d.result_kind(), kind, "{shape:?}");
            assert_eq!(spec::parse(&spec::format(&d)).unwrap(), d);
            assert!(d.width >= 32);
            let t = Texture::random(d, 1);
            assert_eq!(t.data.len(), t.desc.byte_len());
        }
    }
    assert_eq!(default_desc(Shape::D2, ResultKind::Float).width, 256);
    assert_eq!(default_desc(Shape::D1, ResultKind::Float).width, 4096);
}

fn arb_desc() -> impl Strategy<Value = TextureDesc> {
    (
        0usize..7,
        (1u32..20, 1u32..20, 1u32..6, 1u32..4),
        0usize..8,
        prop::sample::select(vec![1u8, 2, 4]),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        (0usize..4, 0usize..4, 0usize..4, 0usize..8, 1u32..4),
    )
        .prop_map(|(s, (w, h, dp, l), ty, ch, flags, modes)| {
            let shape = Shape::ALL[s];
            let ty = ChannelType::ALL[ty];
            let mut d = TextureDesc::new(shape, [w, h, dp], ty, ch);
            if shape.is_layered() {
                d.layers = l;
            }
            let (norm, linear, nfloat, mipl) = flags;
            if nfloat && ty.can_normalize() {
                d.read_mode = ReadMode::NormalizedFloat;
            }
            if linear && d.result_kind() == ResultKind::Float {
                d.sampler.filter = FilterMode::Linear;
            }
            let all = [
                AddressMode::Clamp,
                AddressMode::Border,
                AddressMode::Wrap,
                AddressMode::Mirror,
            ];
            let largest = d.width.max(d.height).max(d.depth);
            d.mip_levels = modes.4.min(32 - largest.leading_zeros());
            // Wrap and mirror need normalized coordinates or mip levels.
            let any_mode = norm || d.mip_levels > 1;
            let pick = |k: usize| if any_mode { all[k] } else { all[k % 2] };
            d.sampler.normalized_coords = norm;
            d.sampler.address = [pick(modes.0), pick(modes.1), pick(modes.2)];
            d.sampler.compare = CompareFunc::ALL[modes.3];
            if mipl {
                d.sampler.mip_filter = FilterMode::Linear;
            }
            d
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Filtering a constant texture (away from border texels) returns the constant, at any
    /// coordinate, filter, level and address mode.
    #[test]
    fn constant_texture_filters_to_the_constant(
        desc in arb_desc(),
        c in -8.0f32..8.0,
        coords in prop::array::uniform3(-3.0f32..3.0),
        layer in -2i32..5,
        lod in -1.0f32..4.0,
    ) {
        let mut d = desc;
        d.channel_type = ChannelType::F32;
        d.read_mode = ReadMode::ElementType;
        for m in d.sampler.address.iter_mut() {
            if *m == AddressMode::Border {
                *m = AddressMode::Clamp;
            }
        }
        let n = d.byte_len() / 4;
        let t = Texture::from_bytes(d.clone(), f32_bytes(&vec![c; n])).unwrap();
        let q = SampleQuery { coords, layer, lod: Lod::Level(lod), ..SampleQuery::default() };
        let out = t.sample(&q);
        let expect = |k: usize| if k < d.channels as usize { c } else { 0.0 };
        for (k, w) in out.iter().enumerate() {
            prop_assert_eq!(f32::from_bits(*w), expect(k), "lane {}", k);
        }
    }

    /// Linear filtering of a 1D ramp 0, 256 gives 256 · alpha: an integer (weights are
    /// multiples of 1/256) within one of the exact 256 · frac(x - 0.5).
    #[test]
    fn linear_weights_are_multiples_of_1_256(x in 0.5f32..1.5) {
        let t = tex_f32(Shape::D1, [2, 1, 1], &[0.0, 256.0], |d| d.sampler.filter = FilterMode::Linear);
        let v = f32::from_bits(t.sample(&q1(x))[0]);
        prop_assert_eq!(v, v.round());
        let exact = (x as f64 - 0.5) * 256.0;
        prop_assert!((v as f64 - exact).abs() <= 0.5, "{} vs {}", v, exact);
    }

    /// A linear sample lies between the smallest and largest texel (border colour 0
    /// included), for every float texture.
    #[test]
    fn linear_samples_stay_within_the_texels(
        desc in arb_desc(),
        seed in any::<u64>(),
        coords in prop::array::uniform3(-2.0f32..2.0),
    ) {
        let mut d = desc;
        d.channel_type = ChannelType::F16;
        d.read_mode = ReadMode::ElementType;
        d.sampler.filter = FilterMode::Linear;
        let t = Texture::random(d.clone(), seed);
        let out = t.sample(&SampleQuery { coords, ..SampleQuery::default() });
        let texels: Vec<f32> = t.data.chunks_exact(2)
            .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect();
        let lo = texels.iter().cloned().fold(0.0f32, f32::min);
        let hi = texels.iter().cloned().fold(1.0f32, f32::max);
        for w in out {
            let v = f32::from_bits(w);
            prop_assert!(v >= lo && v <= hi, "{} not in [{}, {}]", v, lo, hi);
        }
    }

    /// Every valid description round-trips through `spec::format` and `spec::parse`.
    #[test]
    fn spec_round_trips(desc in arb_desc()) {
        prop_assume!(desc.validate().is_ok());
        let text = spec::format(&desc);
        prop_assert_eq!(parse(&text).unwrap(), desc, "{}", text);
    }

    /// Sampling never panics, on any coordinates, layer, offset and level of detail, and
    /// integer fetches never do either.
    #[test]
    fn sampling_is_total(
        desc in arb_desc(),
        coords in prop::array::uniform3(any::<f32>()),
        layer in any::<i32>(),
        offset in prop::array::uniform3(-8i32..8),
        lod in any::<f32>(),
        icoords in prop::array::uniform4(any::<i32>()),
        ilod in -2i32..6,
        dref in prop::option::of(any::<f32>()),
    ) {
        let t = Texture::random(desc, 1);
        let q = SampleQuery { coords, layer, offset, lod: Lod::Level(lod), depth_ref: dref };
        t.sample(&q);
        t.gather(1, &q);
        t.sample(&SampleQuery { lod: Lod::Grad { dx: coords, dy: [lod; 3] }, ..q });
        t.fetch(icoords, ilod);
    }
}

#[test]
fn launch_bindings_from_descriptions_and_defaults() {
    use leafold::texture::launch::{bind_for_launch, texel_seed, TextureNeed};
    let need = |name: &str, object, shape, kind| TextureNeed {
        name: name.to_string(),
        object,
        shape,
        kind,
        samples: 1,
    };
    let needs = [
        need("img", false, Shape::D2, ResultKind::Float),
        need("img", false, Shape::D2, ResultKind::Float),
        need("lut", false, Shape::D1, ResultKind::Unsigned),
        need("tobj", true, Shape::D3, ResultKind::Float),
        need("tobj2", true, Shape::A2, ResultKind::Signed),
    ];
    let given = parse_bindings(&["img=2d:16x8,u8x4,nfloat", "other=1d:4,f32"]).unwrap();
    let l = bind_for_launch(&needs, &given, 5).unwrap();
    let img = l.bindings.by_name("img").unwrap();
    assert_eq!((img.desc.width, img.desc.height), (16, 8));
    assert_eq!(img.desc.read_mode, ReadMode::NormalizedFloat);
    assert_eq!(
        l.bindings.by_name("lut").unwrap().desc,
        default_desc(Shape::D1, ResultKind::Unsigned)
    );
    assert_eq!(
        l.handles,
        [("tobj".to_string(), 1), ("tobj2".to_string(), 2)]
    );
    assert_eq!(l.bindings.by_handle(1).unwrap().desc.shape, Shape::D3);
    assert_eq!(
        l.bindings.by_handle(2).unwrap().desc.result_kind(),
        ResultKind::Signed
    );
    assert_eq!(l.unused, ["other"]);
    // reproducible from the seed, different per name and per seed
    assert_eq!(
        bind_for_launch(&needs, &given, 5).unwrap().bindings,
        l.bindings
    );
    assert_ne!(
        bind_for_launch(&needs, &given, 6).unwrap().bindings,
        l.bindings
    );
    assert_ne!(texel_seed(5, "a"), texel_seed(5, "b"));
    // a description of another shape than the kernel reads is an error naming both
    let bad = parse_bindings(&["img=3d:4x4x4,f32"]).unwrap();
    let e = bind_for_launch(&needs, &bad, 1).unwrap_err();
    assert!(
        e.contains("`img` is described as 3d but the kernel reads it as 2d"),
        "{e}"
    );
}

#[test]
fn verify_cli_reads_texture_descriptions() {
    use std::process::Command;
    let dir = std::env::temp_dir().join(format!("leafold_texmodel_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("k.ptx");
    std::fs::write(
        &path,
        ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k() { ret; }\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_leafold"))
            .arg("verify")
            .args(extra)
            .arg(&path)
            .output()
            .unwrap()
    };
    let out = run(&["--texture", "t=2d:4x4,f64"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--texture: texture description `t=2d:4x4,f64`: unknown texel format `f64`"),
        "{err}"
    );
    let out = run(&[
        "--texture",
        "t=2d:4x4,f32",
        "--texture",
        "u=cube:8,u8x4,nfloat",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // an unnormalized mirror sampler on a mipmapped texture, as the driver makes one
    let out = run(&["--texture", "t=2d:6x3,f32,mips=3,mirror"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = Command::new(env!("CARGO_BIN_EXE_leafold"))
        .args(["verify", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--texture <NAME=SPEC>"), "{help}");
    assert!(help.contains("bordercolor=R/G/B/A"), "{help}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn address_modes_per_dimension() {
    // 4x4, value = 10y + x; x wraps, y is border (colour 99), normalized
    let v: Vec<f32> = (0..16).map(|i| (10 * (i / 4) + i % 4) as f32).collect();
    let t = tex_f32(Shape::D2, [4, 4, 1], &v, |d| {
        d.sampler.normalized_coords = true;
        d.sampler.address = [AddressMode::Wrap, AddressMode::Border, AddressMode::Clamp];
        d.sampler.border_color = [99.0; 4];
    });
    // x = 1.125 -> 4.5 -> 0 (wrapped), y = 0.375 -> 1.5 -> 1
    assert_eq!(t.sample(&q2(1.125, 0.375)), r(10.0));
    // y out of range: the border colour, whatever x is
    assert_eq!(t.sample(&q2(0.125, 1.125)), lanes([99.0; 4]));
    // linear across the x seam at y's first centre: texels 3 and 0 of row 0, half each
    let l = tex_f32(Shape::D2, [4, 4, 1], &v, |d| {
        d.sampler.normalized_coords = true;
        d.sampler.filter = FilterMode::Linear;
        d.sampler.address = [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Clamp];
    });
    assert_eq!(l.sample(&q2(0.0, 0.125)), r(1.5));
    // mirror at the far y edge: y = 1.0 -> 4 - 0.5 = 3.5: rows 3 and 4 -> 3, so row 3 at
    // x's centre 0.125 -> texel 0
    assert_eq!(l.sample(&q2(0.125, 1.0)), r(30.0));
}

#[test]
fn cube_array_layers_clamp_and_fetch() {
    // 2 cubes of 1x1 faces: face f of cube l holds 100l + f
    let v: Vec<f32> = (0..12).map(|i| (100 * (i / 6) + i % 6) as f32).collect();
    let t = tex_f32(Shape::ACube, [1, 1, 1], &v, |d| d.layers = 2);
    let q = |layer, c| SampleQuery {
        coords: c,
        layer,
        ..SampleQuery::default()
    };
    assert_eq!(t.sample(&q(0, [0.0, 0.0, -1.0])), r(5.0));
    assert_eq!(t.sample(&q(1, [-1.0, 0.0, 0.0])), r(101.0));
    assert_eq!(t.sample(&q(7, [0.0, 1.0, 0.0])), r(102.0));
    assert_eq!(t.sample(&q(-1, [0.0, -1.0, 0.0])), r(3.0));
    assert_eq!(t.query(TxqQuery::ArraySize, 0), 2);
    assert_eq!(t.desc.byte_len(), 12 * 4);
}

/// `p+OFF` names the texture object a kernel loads from a buffer (`verify --texture
/// out+1024=...`); a bad offset is still refused.
#[test]
fn a_texture_object_in_a_buffer_can_be_described() {
    let all = parse_bindings(&["out+1024=2d:16x8,u8x4".to_string()]).unwrap();
    assert_eq!(all[0].0, "out+1024");
    for bad in ["out+=2d:4x4,f32", "out+1x=2d:4x4,f32", "+8=2d:4x4,f32"] {
        assert!(parse_bindings(&[bad.to_string()]).is_err(), "{bad}");
    }
}

/// The texture unit's arithmetic as the hardware check measured it on a GPU (src/texture.rs,
/// "Checked on hardware"): each value below is a hardware result, not the model's own.
#[test]
fn hardware_measured_rules() {
    // 2D corner weights (x + 2y order), solved exactly from f32 fetches of 4-channel texels.
    for (ax, ay, w) in [
        (128, 145, [56, 55, 72, 73]),
        (128, 213, [22, 21, 106, 107]),
        (233, 254, [0, 2, 23, 231]),
        (38, 4, [215, 37, 3, 1]),
        (191, 80, [45, 131, 20, 60]),
    ] {
        assert_eq!(bilinear_weights(ax, ay), w, "ax {ax} ay {ay}");
    }
    // A normalized coordinate a hair above k/N reads texel k - 1: the f32 nearest 1/3 times
    // 9 texels is 3.00000009, and the unit read texel 2.
    let v: Vec<f32> = (0..9).map(|i| i as f32).collect();
    let norm = tex_f32(Shape::D1, [9, 1, 1], &v, |d| {
        d.sampler.normalized_coords = true
    });
    assert_eq!(norm.sample(&q1(1.0f32 / 3.0)), r(2.0));
    // f32 1.2 (21 fractional bits cut it below 1.2) times 5, mirrored: texel 4, not 3.
    let five: Vec<f32> = (0..5).map(|i| i as f32).collect();
    let m = tex_f32(Shape::D1, [5, 1, 1], &five, |d| {
        d.sampler.normalized_coords = true;
        d.sampler.address = [AddressMode::Mirror; 3];
    });
    assert_eq!(m.sample(&q1(1.2)), r(4.0));
    // A mipmapped texture reads normalized coordinates whatever the sampler says: x = 0.5 of
    // 2 texels is texel 1.
    let mip = tex_f32(Shape::D1, [2, 1, 1], &[5.0, 7.0, 9.0], |d| d.mip_levels = 2);
    assert_eq!(mip.sample(&q1(0.5)), r(7.0));
    // tld4's footprint starts from the coordinate rounded to 1/256 of a texel: 0.954545
    // (just below 10.5/11) times 11 texels lands on 10.5, the footprint on texels 10 and 11.
    let row: Vec<f32> = (0..11).map(|i| i as f32).collect();
    let g = tex_f32(Shape::D2, [11, 1, 1], &row, |d| {
        d.sampler.normalized_coords = true
    });
    let q = SampleQuery {
        coords: [0.954_545_4, 0.5, 0.0],
        ..SampleQuery::default()
    };
    assert_eq!(g.gather(0, &q), lanes([10.0, 10.0, 10.0, 10.0]));
    held_out_rules();
}

/// Rules fitted to the held-out run of 2026-11-30 (4,500 generated cases, `/tmp/dev2/tex1`
/// and `tex2` fitted, `tex3` held out; `examples/hwcheck_texcmp.rs` compares). Each input is
/// one GPU fetch; texel values are the case's or stand for the texel the GPU was seen to read.
fn held_out_rules() {
    // Texel index as the value: face f, row y, column x of an n×n cube is 100f + 10y + x.
    let cube = |n: u32, address: [AddressMode; 3]| {
        let v: Vec<f32> = (0..6 * n * n)
            .map(|i| (100 * (i / (n * n)) + 10 * (i % (n * n) / n) + i % n) as f32)
            .collect();
        tex_f32(Shape::Cube, [n, n, 1], &v, |d| {
            d.sampler.normalized_coords = true;
            d.sampler.address = address;
        })
    };
    let dir = |x: f32, y: f32, z: f32| SampleQuery {
        coords: cube_project([x, y, z]),
        ..SampleQuery::default()
    };
    use AddressMode::{Border, Clamp, Mirror, Wrap};
    // Case 31 (seed 1031): (-0.1837, -1, -1) on a 6×6 cube, x mirror, y wrap: face -z, its
    // t = 1 is row 6, which wraps to row 0 (a per-face clamp would read row 5).
    let q = dir(-0.183_651_92, -1.0, -1.0);
    assert_eq!(cube(6, [Mirror, Wrap, Clamp]).sample(&q), r(503.0));
    // Case 1261 (seed 2261): (0.0924, -1, -1) on a 3×3 cube, y border: the border colour.
    let q = dir(0.092_376_23, -1.0, -1.0);
    assert_eq!(cube(3, [Clamp, Border, Wrap]).sample(&q), r(0.0));
    // Case 82 (seed 1082): the zero direction reads the centre of face +z, texel (1, 1).
    assert_eq!(
        cube(2, [Wrap, Border, Clamp]).sample(&dir(0.0, 0.0, 0.0)),
        r(411.0)
    );

    // Case 16 (seed 1016): a mipmapped 6×3 texture with an unnormalized mirror sampler reads
    // x = 40.29 as normalized but clamps it: level 0, texel (5, 2), not mirrored texel 1.
    // (The driver makes this sampler; `TextureDesc::validate` accepts it.)
    let v: Vec<f32> = (0..6 * 3 + 3 + 1).map(|i| i as f32).collect();
    let mut d = TextureDesc::new(Shape::D2, [6, 3, 1], ChannelType::F32, 1);
    d.mip_levels = 3;
    d.sampler.address = [Mirror, Clamp, Clamp];
    d.validate().unwrap();
    let t = Texture {
        desc: d,
        data: f32_bytes(&v),
    };
    let q = SampleQuery {
        coords: [40.285_713, 1.0, 0.0],
        lod: Lod::Level(-0.863_281_25),
        ..SampleQuery::default()
    };
    assert_eq!(t.sample(&q), r(17.0));

    // Case 166 (seed 1166): a one-texel 1D texture, border modes, linear, x = 1: half of the
    // texel along x (texel 1 is the border), half again along y (row -1 is the border).
    let texel = [0x3ed7_6134u32, 0x3fc0_c303, 0x4033_26c6, 0xbea2_2603].map(f32::from_bits);
    let mut d = TextureDesc::new(Shape::D1, [1, 1, 1], ChannelType::F32, 4);
    d.sampler.filter = FilterMode::Linear;
    d.sampler.address = [Border; 3];
    let t = Texture::from_bytes(d, f32_bytes(&texel)).unwrap();
    assert_eq!(
        t.sample(&q1(1.0)),
        [0x3dd7_6134, 0x3ec0_c303, 0x3f33_26c6, 0xbda2_2603]
    );

    // Case 1432 (seed 2432): lod 0.99917 (0x3f7fc990) with a linear mip filter blends
    // floor(0.99917 · 256) = 255/256 of level 1 (rounding would take all of it).
    let t = tex_f32(Shape::D1, [2, 1, 1], &[0.0, 0.0, 256.0], |d| {
        d.mip_levels = 2;
        d.sampler.mip_filter = FilterMode::Linear;
    });
    let q = SampleQuery {
        coords: [0.25, 0.0, 0.0],
        lod: Lod::Level(f32::from_bits(0x3f7f_c990)),
        ..SampleQuery::default()
    };
    assert_eq!(t.sample(&q), r(255.0));

    // Case 12 (seed 1012), thread 45: a 3D linear fetch whose footprint (texels (0..2, 5..7,
    // 2..4)) is copied into a 2×2×2 texture, weights 131, 128, 137 (256ths): the GPU
    // returned 0x3ebacb6e (0.36483); exact products of the 9-bit weights give 0.36753.
    // A linear fetch at `coords` of a 2×2×2 f32 texture holding the GPU's footprint.
    let fetch_3d = |texels: [u32; 8], coords: [f32; 3]| {
        let t = tex_f32(Shape::D3, [2, 2, 2], &texels.map(f32::from_bits), |d| {
            d.sampler.filter = FilterMode::Linear
        });
        t.sample(&SampleQuery {
            coords,
            ..SampleQuery::default()
        })[0]
    };
    let v = [
        3216606034u32,
        1045568306,
        3212727368,
        3219908532,
        1064870311,
        1081130459,
        3180629799,
        1069651294,
    ];
    assert_eq!(fetch_3d(v, [1.010_546_2, 1.0, 1.035_156_3]), 0x3eba_cb6e);
    // Thread 19 of the same case: weights 113, 43, 33, footprint (1..3, 6..8, 0..2); the
    // GPU returned 0xbeca6d0f, a plain split of the 2D weights between the slices -0.41696.
    let v = [
        0x3e93_982bu32,
        0xbef3_ab30,
        0x3f98_dc49,
        0xc0b9_337f,
        0xc0fa_2178,
        0x40fa_8de0,
        0xbe44_d5bd,
        0xbe84_de35,
    ];
    let at = [0x3f71_0a40, 0x3f2b_5460, 0x3f20_fbf0].map(f32::from_bits);
    assert_eq!(fetch_3d(v, at), 0xbeca_6d0f);
}
