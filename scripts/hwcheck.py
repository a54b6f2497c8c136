#!/usr/bin/env python3
"""Replay the launches that `examples/hwcheck_export.rs` exported on a real NVIDIA GPU and
compare every buffer with what `ir::eval` computed (the hardware check of the reference).

    python3 scripts/hwcheck.py CASEDIR REPORT [FIRST]

Talks to the CUDA driver (libcuda.so.1) through ctypes, nothing else: the driver compiles each
PTX for the GPU at hand (cuModuleLoadDataEx), the parameters are the exported bytes with the
buffer pointers replaced by device addresses, and the launch passes them as one parameter
buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), exactly the layout `ir::eval` used.

A launch that faults leaves the CUDA context unusable, so the script stops at the first such
error and exits with status 3 after writing how far it got; run it again with FIRST = the next
case (scripts/hwcheck.sh does). REPORT gets one line per case:
    ID KERNEL ok | nan-payload | approx-mismatch ... | clock-mismatch ... | mismatch REGION NBYTES FIRSTOFFSET exp=.. got=..
              | jit-error MSG | launch-error MSG
nan-payload: every differing byte lies in a word that is a NaN in both (as f32 or as f64): PTX
gives no NaN payload, and eval keeps Maxwell's. approx-mismatch: the PTX uses an approximate
operation (`.approx`, `div.full`, `sin`..., whose results PTX bounds but does not fix; eval models
Maxwell's MUFU, another GPU has its own) or a tensor-core product (`mma`). Texture cases
(`--tex`): tex-mismatch, or tex-precision where every difference is within the texture unit's
known filter precision (`tex_tolerated`). Anything else, `mismatch`, is a finding. With GOTDIR
set, a texture run can be compared again, thread by thread, with the model as it is later
(`examples/hwcheck_texcmp.rs CASEDIR REPORT GOTDIR`), without a GPU.
"""
import re
import struct

# Tensor-core products too (`mma`, `wmma.mma`): PTX fixes no order or rounding of their sums,
# and a GPU's tensor cores truncate where `ir::eval` rounds.
APPROX = re.compile(rb"\.approx|div\.full|\b(sin|cos|lg2|ex2|rsqrt|tanh)\.|\bw?mma\.")
# Clocks and timers: `ir::eval` reads a deterministic model, a GPU the time.
CLOCK = re.compile(rb"%clock|%globaltimer")
# The driver of the check machine may read an older PTX ISA than the newest toolkit writes
# (NVRTC 13.5 stamps 9.5 on code that uses nothing newer): on a JIT error about the version,
# the module is loaded again with this one.
FALLBACK_VERSION = b".version 9.0"


def is_nan(b, size):
    if len(b) < size:
        return False
    if size == 4:
        x = struct.unpack("<f", b)[0]
    else:
        x = struct.unpack("<d", b)[0]
    return x != x


def nan_only(exp, got, diff):
    """Every differing byte sits in an aligned f32 or f64 word that is a NaN on both sides."""
    for i in diff:
        ok = False
        for size in (4, 8):
            a = i - i % size
            if is_nan(exp[a:a + size], size) and is_nan(got[a:a + size], size):
                ok = True
        if not ok:
            return False
    return True
import ctypes
import os
import sys
import time

cuda = ctypes.CDLL("libcuda.so.1")
CUdeviceptr = ctypes.c_uint64
_vp, _u, _sz = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t
cuda.cuMemAlloc_v2.argtypes = [ctypes.POINTER(CUdeviceptr), _sz]
cuda.cuMemcpyHtoD_v2.argtypes = [CUdeviceptr, _vp, _sz]
cuda.cuMemcpyDtoH_v2.argtypes = [_vp, CUdeviceptr, _sz]
cuda.cuMemFree_v2.argtypes = [CUdeviceptr]
cuda.cuLaunchKernel.argtypes = [_vp, _u, _u, _u, _u, _u, _u, _u, _vp, _vp, _vp]
cuda.cuModuleLoadDataEx.argtypes = [ctypes.POINTER(_vp), ctypes.c_char_p, _u, _vp, _vp]
cuda.cuModuleGetFunction.argtypes = [ctypes.POINTER(_vp), _vp, ctypes.c_char_p]
cuda.cuModuleUnload.argtypes = [_vp]
cuda.cuFuncSetAttribute.argtypes = [_vp, ctypes.c_int, ctypes.c_int]
cuda.cuArray3DCreate_v2.argtypes = [ctypes.POINTER(_vp), _vp]
cuda.cuArrayDestroy.argtypes = [_vp]
cuda.cuMemcpy3D_v2.argtypes = [_vp]
cuda.cuMipmappedArrayCreate.argtypes = [ctypes.POINTER(_vp), _vp, _u]
cuda.cuMipmappedArrayGetLevel.argtypes = [ctypes.POINTER(_vp), _vp, _u]
cuda.cuMipmappedArrayDestroy.argtypes = [_vp]
cuda.cuTexObjectCreate.argtypes = [ctypes.POINTER(ctypes.c_uint64), _vp, _vp, _vp]
cuda.cuTexObjectDestroy.argtypes = [ctypes.c_uint64]


class Array3DDesc(ctypes.Structure):
    _fields_ = [("Width", _sz), ("Height", _sz), ("Depth", _sz), ("Format", _u),
                ("NumChannels", _u), ("Flags", _u)]


class Memcpy3D(ctypes.Structure):
    _fields_ = [("srcXInBytes", _sz), ("srcY", _sz), ("srcZ", _sz), ("srcLOD", _sz),
                ("srcMemoryType", _u), ("srcHost", _vp), ("srcDevice", CUdeviceptr),
                ("srcArray", _vp), ("reserved0", _vp), ("srcPitch", _sz), ("srcHeight", _sz),
                ("dstXInBytes", _sz), ("dstY", _sz), ("dstZ", _sz), ("dstLOD", _sz),
                ("dstMemoryType", _u), ("dstHost", _vp), ("dstDevice", CUdeviceptr),
                ("dstArray", _vp), ("reserved1", _vp), ("dstPitch", _sz), ("dstHeight", _sz),
                ("WidthInBytes", _sz), ("Height", _sz), ("Depth", _sz)]


def make_texture(casedir, cid, k):
    """The texture object of `ID_tK.desc`/`.bin` (examples/hwcheck/tex.rs): a CUDA array
    (layered and cube flags as the shape says) or linear memory, filled with the exported
    texel bytes, whose layout (face by face, then z, y, x) is a 3D copy's. Returns the handle
    and what to free."""
    d = dict(w.split("=", 1) for w in open(os.path.join(casedir, f"{cid}_t{k}.desc")).read().split())
    data = open(os.path.join(casedir, f"{cid}_t{k}.bin"), "rb").read()
    shape = d["shape"]
    w, h, dep, layers = int(d["w"]), int(d["h"]), int(d["d"]), int(d["layers"])
    fmt, ch = int(d["fmt"]), int(d["ch"])
    texel = int(d["bytes"]) * ch
    res = ctypes.create_string_buffer(144)  # CUDA_RESOURCE_DESC
    free = []
    if d["linear"] == "1":
        p = CUdeviceptr()
        ck(cuda.cuMemAlloc_v2(ctypes.byref(p), len(data)), "tex alloc")
        ck(cuda.cuMemcpyHtoD_v2(p, data, len(data)), "tex htod")
        free.append(("mem", p))
        # CU_RESOURCE_TYPE_LINEAR = 2: devPtr, format, numChannels, sizeInBytes
        struct.pack_into("<I", res, 0, 2)
        struct.pack_into("<QIIQ", res, 8, p.value, fmt, ch, len(data))
    else:
        # Array extents: 1D (h = d = 0), 2D (d = 0), 3D; layers and cube faces are the depth.
        flags, rows, slices = 0, h, 1
        if shape == "1d":
            ah, ad, rows = 0, 0, 1
        elif shape == "2d":
            ah, ad = h, 0
        elif shape == "3d":
            ah, ad, slices = h, dep, dep
        elif shape == "a1d":
            ah, ad, rows, slices, flags = 0, layers, 1, layers, 1
        elif shape == "a2d":
            ah, ad, slices, flags = h, layers, layers, 1
        elif shape == "cube":
            ah, ad, slices, flags = h, 6, 6, 4
        else:  # acube
            ah, ad, slices, flags = h, 6 * layers, 6 * layers, 5
        levels = int(d.get("levels", "1"))
        desc = Array3DDesc(w, ah, ad, fmt, ch, flags)
        if levels > 1:
            mm = ctypes.c_void_p()
            ck(cuda.cuMipmappedArrayCreate(ctypes.byref(mm), ctypes.byref(desc), levels), "mipmap create")
            free.append(("mipmap", mm))
        at = 0
        for lvl in range(levels):
            # Level l: max(1, size >> l) per dimension; layers and cube faces do not shrink.
            lw, lrows = max(1, w >> lvl), max(1, rows >> lvl)
            lslices = max(1, slices >> lvl) if shape == "3d" else slices
            if levels > 1:
                arr = ctypes.c_void_p()
                ck(cuda.cuMipmappedArrayGetLevel(ctypes.byref(arr), mm, lvl), "mipmap level")
            else:
                arr = ctypes.c_void_p()
                ck(cuda.cuArray3DCreate_v2(ctypes.byref(arr), ctypes.byref(desc)), "array create")
                free.append(("array", arr))
            n = lw * lrows * lslices * texel
            host = ctypes.create_string_buffer(data[at:at + n], n)
            at += n
            cp = Memcpy3D()
            cp.srcMemoryType = 1  # host
            cp.srcHost = ctypes.cast(host, ctypes.c_void_p)
            cp.srcPitch = lw * texel
            cp.srcHeight = lrows
            cp.dstMemoryType = 3  # array
            cp.dstArray = arr
            cp.WidthInBytes = lw * texel
            cp.Height = lrows
            cp.Depth = lslices
            ck(cuda.cuMemcpy3D_v2(ctypes.byref(cp)), "tex copy")
        if at != len(data):
            raise RuntimeError(f"texel bytes {len(data)}, levels take {at}")
        if levels > 1:
            struct.pack_into("<I", res, 0, 1)  # CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
            struct.pack_into("<Q", res, 8, mm.value)
        else:
            struct.pack_into("<I", res, 0, 0)  # CU_RESOURCE_TYPE_ARRAY
            struct.pack_into("<Q", res, 8, arr.value)
    td = ctypes.create_string_buffer(104)  # CUDA_TEXTURE_DESC
    am = [int(x) for x in d["addr"].split(",")]
    # Flags: read as integer 0x1, normalized coordinates 0x2, no trilinear optimization 0x20
    # (the model blends two levels with the exact 8-bit fraction).
    tflags = (1 if d["int_read"] == "1" else 0) | (2 if d["normcoords"] == "1" else 0) | 0x20
    struct.pack_into("<IIIIII", td, 0, am[0], am[1], am[2], int(d["filter"]), tflags, 0)
    # mipmapFilterMode, mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp
    levels = int(d.get("levels", "1"))
    struct.pack_into("<Ifff", td, 24, int(d.get("mipfilter", "0")), 0.0, 0.0, float(levels - 1))
    handle = ctypes.c_uint64()
    ck(cuda.cuTexObjectCreate(ctypes.byref(handle), res, td, None), "tex object")
    free.append(("tex", handle))
    return handle.value, free


def free_all(things):
    for kind, x in things:
        if kind == "mem":
            cuda.cuMemFree_v2(x)
        elif kind == "array":
            cuda.cuArrayDestroy(x)
        elif kind == "mipmap":
            cuda.cuMipmappedArrayDestroy(x)
        else:
            cuda.cuTexObjectDestroy(x.value)


def tex_tolerated(casedir, cid, exp, got):
    """Whether a texture case differs only where the model knowingly departs from the texture
    unit (src/texture.rs, "Checked on hardware"): f32 filtering by 2 ulp; 16-bit floats and
    8/16-bit normalized integers, filtered or gathered, by 0.5% or 3e-5."""
    d = dict(w.split("=", 1) for w in open(os.path.join(casedir, f"{cid}_t0.desc")).read().split())
    if d["op"].startswith("Query"):
        # `txq` answers integers: any difference is a mismatch (a small one read as float
        # bits would look like a denormal within the tolerance).
        return False
    filtered = d["filter"] == "1" or d.get("mipfilter") == "1" or d["op"].startswith("Gather")
    small = d["fmt"] in ("16", "1", "2", "8", "9") and (d["fmt"] == "16" or d["int_read"] == "0")
    for i in range(0, len(exp) - 3, 4):
        a, b = exp[i:i + 4], got[i:i + 4]
        if a == b:
            continue
        x, y = struct.unpack("<i", a)[0], struct.unpack("<i", b)[0]
        fx, fy = struct.unpack("<f", a)[0], struct.unpack("<f", b)[0]
        if d["fmt"] == "32" and filtered and (x < 0) == (y < 0) and abs(x - y) <= 2:
            continue
        if small and filtered and abs(fx - fy) <= max(3e-5, 5e-3 * max(abs(fx), abs(fy))):
            continue
        return False
    return True


def word_diff(exp, got):
    """Differing 32-bit words of a texture case: count, and the largest distance in units in
    the last place among words that are floats on both sides (same sign)."""
    n, ulp = 0, 0
    for i in range(0, len(exp) - 3, 4):
        a, b = exp[i:i + 4], got[i:i + 4]
        if a != b:
            n += 1
            x, y = struct.unpack("<i", a)[0], struct.unpack("<i", b)[0]
            if (x < 0) == (y < 0):
                ulp = max(ulp, abs(x - y))
            else:
                ulp = max(ulp, 1 << 31)
    return n, ulp


def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p()
        cuda.cuGetErrorString(r, ctypes.byref(s))
        raise RuntimeError(f"{what}: {r} {s.value.decode() if s.value else ''}")


def main():
    casedir, report = sys.argv[1], sys.argv[2]
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    # Texture cases' results are kept (GOTDIR) so that the model can be studied afterwards;
    # with GOTALL set, every mismatching case's are.
    gotdir = os.environ.get("GOTDIR")
    ck(cuda.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    ck(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    ck(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
    ck(cuda.cuCtxSetCurrent(ctx), "set current")
    cases = [l.split() for l in open(os.path.join(casedir, "cases.txt")) if l.strip()]
    modules = {}
    out = open(report, "a", buffering=1)  # line by line: a killed run keeps its lines
    t0 = time.time()
    for c in cases:
        cid = int(c[0])
        if cid < first:
            continue
        ptx, kernel = c[1], c[2]
        grid = [int(x) for x in c[3:6]]
        block = [int(x) for x in c[6:9]]
        dyn, nreg = int(c[9]), int(c[10])
        params = bytearray(bytes.fromhex(c[11]) if c[11] != "-" else b"")
        fixups = [] if c[12] == "-" else [f.split(":") for f in c[12].split(",")]
        # A fresh module per case: a kernel may leave the module's `.global` variables changed
        # (Mandelbrot's `blockCounter`), and eval starts every launch from their initializers.
        for m in modules.values():
            if not isinstance(m, tuple):
                cuda.cuModuleUnload(m)
        modules.clear()
        if ptx not in modules:
            text = open(os.path.join(casedir, ptx), "rb").read() + b"\0"
            mod = ctypes.c_void_p()
            logsize = 1 << 14
            log = ctypes.create_string_buffer(logsize)
            # CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
            opts = (ctypes.c_int * 2)(5, 6)
            vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(logsize))
            r = cuda.cuModuleLoadDataEx(ctypes.byref(mod), text, 2, opts, vals)
            if r != 0 and b"version" in log.value.lower():
                text = re.sub(rb"^\s*\.version\s+[0-9.]+", FALLBACK_VERSION, text, count=1, flags=re.M)
                r = cuda.cuModuleLoadDataEx(ctypes.byref(mod), text, 2, opts, vals)
            modules[ptx] = mod if r == 0 else ("jit-error", f"{r} {log.value.decode(errors='replace')[:300]}")
        mod = modules[ptx]
        source = open(os.path.join(casedir, ptx), "rb").read()
        approx = APPROX.search(source) is not None
        clock = CLOCK.search(source) is not None
        if isinstance(mod, tuple):
            out.write(f"{cid} {kernel} {mod[0]} {mod[1]!r}\n")
            continue
        fn = ctypes.c_void_p()
        r = cuda.cuModuleGetFunction(ctypes.byref(fn), mod, kernel.encode())
        if r != 0:
            out.write(f"{cid} {kernel} jit-error no-function {r}\n")
            continue
        bufs, exps = [], []
        for k in range(nreg):
            data = open(os.path.join(casedir, f"{cid}_r{k}.in"), "rb").read()
            exps.append(open(os.path.join(casedir, f"{cid}_r{k}.exp"), "rb").read())
            p = CUdeviceptr()
            ck(cuda.cuMemAlloc_v2(ctypes.byref(p), max(len(data), 1)), "alloc")
            ck(cuda.cuMemcpyHtoD_v2(p, data, len(data)), "htod")
            bufs.append((p, len(data)))
        textures = []
        try:
            for f in fixups:
                at = int(f[0])
                if f[1].startswith("t"):
                    handle, free = make_texture(casedir, cid, int(f[1][1:]))
                    textures += free
                    params[at:at + 8] = handle.to_bytes(8, "little")
                else:
                    reg, delta = int(f[1]), int(f[2])
                    params[at:at + 8] = (bufs[reg][0].value + delta).to_bytes(8, "little")
        except RuntimeError as e:
            out.write(f"{cid} {kernel} texture-error {e}\n")
            free_all(textures)
            for p, _ in bufs:
                cuda.cuMemFree_v2(p)
            continue
        pbuf = ctypes.create_string_buffer(bytes(params), max(len(params), 1))
        psize = ctypes.c_size_t(len(params))
        # CU_LAUNCH_PARAM_BUFFER_POINTER = 1, _SIZE = 2, CU_LAUNCH_PARAM_END = 0
        extra = (ctypes.c_void_p * 5)(1, ctypes.cast(pbuf, ctypes.c_void_p), 2,
                                      ctypes.cast(ctypes.byref(psize), ctypes.c_void_p), 0)
        if dyn > 48 * 1024:
            cuda.cuFuncSetAttribute(fn, 8, dyn)  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        r = cuda.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                dyn, None, None, extra)
        if r == 0:
            r = cuda.cuCtxSynchronize()
        if r != 0:
            s = ctypes.c_char_p()
            cuda.cuGetErrorString(r, ctypes.byref(s))
            out.write(f"{cid} {kernel} launch-error {r} {s.value.decode() if s.value else ''}\n")
            out.flush()
            # Errors such as an illegal address poison the context: start again after this.
            if r in (700, 701, 702, 715, 716, 717, 718, 719, 720):
                sys.stdout.write(f"next {cid + 1}\n")
                sys.exit(3)
            continue
        verdict = "ok"
        for k, (p, n) in enumerate(bufs):
            got = ctypes.create_string_buffer(n)
            ck(cuda.cuMemcpyDtoH_v2(got, p, n), "dtoh")
            got = got.raw
            if (textures or os.environ.get("GOTALL")) and gotdir and got != exps[k]:
                open(os.path.join(gotdir, f"{cid}_r{k}.got"), "wb").write(got)
            if got != exps[k] and textures:
                n, ulp = word_diff(exps[k], got)
                i = next(i for i in range(n and len(got)) if got[i] != exps[k][i])
                lo = i & ~15
                what = "tex-precision" if tex_tolerated(casedir, cid, exps[k], got) else "tex-mismatch"
                verdict = (f"{what} r{k} words={n} maxulp={ulp} at={lo // 16} "
                           f"exp={exps[k][lo:lo + 16].hex()} got={got[lo:lo + 16].hex()}")
                break
            if got != exps[k]:
                diff = [i for i in range(n) if got[i] != exps[k][i]]
                if nan_only(exps[k], got, diff):
                    verdict = "nan-payload"
                    continue
                i = diff[0]
                lo = i & ~7
                what = "clock-mismatch" if clock else "approx-mismatch" if approx else "mismatch"
                verdict = (f"{what} r{k} {len(diff)} {i} exp={exps[k][lo:lo + 16].hex()} "
                           f"got={got[lo:lo + 16].hex()}")
                break
        for p, _ in bufs:
            cuda.cuMemFree_v2(p)
        free_all(textures)
        out.write(f"{cid} {kernel} {verdict}\n")
    out.flush()
    sys.stdout.write(f"done in {time.time() - t0:.1f}s\n")


if __name__ == "__main__":
    main()
