#!/usr/bin/env python3
"""Regenerate tests/data/nvrtc13/ptx/*.ptx from the CUDA C++ in src/ with NVRTC 13.

NVRTC 13 is what today's toolkits use to make PTX at run time; CUDA 13 no longer targets
Maxwell, so this PTX (.version 9.x, .target sm_75 or newer) is what leafold must bring back to
sm_50/52/53. The sources are written for leafold's tests, under the project's licence.

Install NVRTC first (no GPU or toolkit needed): scripts/install-nvrtc13.sh. Then
    python3 tests/data/nvrtc13/gen.py          [NVRTC13_DIR=... to point at another install]

A source's first line may name its virtual architecture, `// nvrtc-arch: compute_80`
(the default is compute_75, the oldest NVRTC 13 accepts). Options are fixed here so the output
depends on the source and the NVRTC version alone: -default-device, --std=c++17, -O3 (default).
"""
import ctypes
import os
import pathlib
import re
import sys

here = pathlib.Path(__file__).resolve().parent
root = pathlib.Path(os.environ.get("NVRTC13_DIR", pathlib.Path.home() / ".cache/leafold/nvrtc13"))
cu13 = root / "nvidia" / "cu13"
lib = ctypes.CDLL(str(cu13 / "lib" / "libnvrtc.so.13"))
inc = cu13 / "include"


def check(r, what):
    if r != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise SystemExit(f"{what}: {lib.nvrtcGetErrorString(r).decode()}")


def compile_one(path):
    src = path.read_text()
    m = re.match(r"//\s*nvrtc-arch:\s*(compute_\d+)", src)
    arch = m.group(1) if m else "compute_75"
    prog = ctypes.c_void_p()
    check(lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), path.name.encode(), 0, None, None),
          "nvrtcCreateProgram")
    opts = [f"--gpu-architecture={arch}", "-default-device", "--std=c++17",
            f"-I{inc}", f"-I{inc / 'cccl'}"]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    r = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    if r != 0:
        raise SystemExit(f"{path}: NVRTC failed\n{log.value.decode()}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
    ptx = ctypes.create_string_buffer(n.value)
    check(lib.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value.decode()


def main():
    out = here / "ptx"
    out.mkdir(exist_ok=True)
    srcs = sorted((here / "src").glob("*.cu"))
    for s in srcs:
        (out / (s.stem + ".ptx")).write_text(compile_one(s))
        print(f"{s.name} -> ptx/{s.stem}.ptx")


if __name__ == "__main__":
    main()
