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
Maxwell's MUFU, another GPU has its own). Anything else, `mismatch`, is a finding.
"""
import re
import struct

APPROX = re.compile(rb"\.approx|div\.full|\b(sin|cos|lg2|ex2|rsqrt|tanh)\.")
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


def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p()
        cuda.cuGetErrorString(r, ctypes.byref(s))
        raise RuntimeError(f"{what}: {r} {s.value.decode() if s.value else ''}")


def main():
    casedir, report = sys.argv[1], sys.argv[2]
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    ck(cuda.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    ck(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    ck(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
    ck(cuda.cuCtxSetCurrent(ctx), "set current")
    cases = [l.split() for l in open(os.path.join(casedir, "cases.txt")) if l.strip()]
    modules = {}
    out = open(report, "a")
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
        fixups = [] if c[12] == "-" else [tuple(map(int, f.split(":"))) for f in c[12].split(",")]
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
        for at, reg, delta in fixups:
            params[at:at + 8] = (bufs[reg][0].value + delta).to_bytes(8, "little")
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
        out.write(f"{cid} {kernel} {verdict}\n")
    out.flush()
    sys.stdout.write(f"done in {time.time() - t0:.1f}s\n")


if __name__ == "__main__":
    main()
