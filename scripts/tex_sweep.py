#!/usr/bin/env python3
"""Sweep of the `tex` forms issue 21 still counts at 0 (helper texh): one generated PTX per
form, tried on ptxas 11.8 (sm_50) and on leafold. Prints, per group, how many of the forms
ptxas accepts leafold accepts, and of those how many have ptxas's texture instructions: the
sequence of TEX/TEXS/TLD/TLDS/TLD4/TLD4S/TXD/TXQ lines of `cuobjdump -sass`, each reduced to
its mnemonic with modifiers (the `.T`/`.P` phase aside) and its non-register operands (slot,
dimension, mask), equal to ours. Each form that compiles but differs is listed with both
sequences. With -v each form's outcome and ptxas's texture SASS.

usage: scripts/tex_sweep.py LEAFOLD_BIN [-v] [-k GROUP] [-H HANDLE] [--expect FILE]
                           [--write-matching FILE]
  -k GROUP, -H HANDLE    only this group of forms, only this way of naming the texture
  --expect FILE          exit 1 unless every form named in FILE (one `name_handle` a line, `#`
                         comments) compiles on both sides with ptxas's texture instructions
                         (`tests/tex_sweep_mnemonics.rs` runs this)
  --write-matching FILE  write the forms that match now, in that format
(needs $LEAFOLD_ORACLE)
"""
import os, subprocess, sys, tempfile, itertools
from concurrent.futures import ThreadPoolExecutor

ORACLE = os.environ.get("LEAFOLD_ORACLE", "/root/.cache/leafold/oracle/bin")

# Coordinates per shape: (float coords, int coords); arrays take the layer (.s32) first.
def coords(shape, ty):
    r = "%r" if ty == "s32" else "%f"
    c = {"1d": [r+"3"], "2d": [r+"3", r+"4"], "3d": [r+"3", r+"4", r+"5", r+"5"],
         "a1d": ["%r9", r+"3"], "a2d": ["%r9", r+"3", r+"4", r+"4"],
         "cube": [r+"3", r+"4", r+"5", r+"5"], "acube": ["%r9", r+"3", r+"4", r+"5"],
         "a2dms": ["%r9", "%r3", "%r4", "%r5"], "2dms": ["%r9", "%r3", "%r4", "%r4"]}[shape]
    return "{" + ", ".join(c) + "}"

def ndims(shape):
    return {"1d": 1, "a1d": 1, "2d": 2, "a2d": 2, "3d": 3, "cube": 3, "acube": 3,
            "2dms": 2, "a2dms": 2}[shape]

def vec(n, base):
    if n == 1:
        return "{%s1}" % base
    if n == 3:
        n = 4
    return "{" + ", ".join("%s%d" % (base, k + 1) for k in range(n)) + "}"

def offs(shape):
    return vec(ndims(shape), "%ro")

def grads(shape, ty):
    b = "%gi" if ty == "s32" else "%gf"
    return vec(ndims(shape), b + "x") + ", " + vec(ndims(shape), b + "y")

def forms():
    """(group, name, instruction text with T for the texture)."""
    out = []
    def add(g, name, inst):
        out.append((g, name, inst))
    # 1. integer coordinates with offsets (no level)
    for shape in ["1d", "2d", "3d", "a1d", "a2d"]:
        for dc in [False, True]:
            t = "tex.%s.v4.f32.s32 D, [T, %s], %s%s;" % (shape, coords(shape, "s32"), offs(shape),
                                                        ", %fr" if dc else "")
            add("int_off", "int_off_%s%s" % (shape, "_dc" if dc else ""), t)
    # 2. tex.level with s32 coordinates, arrays (and offsets / dc)
    for shape in ["a1d", "a2d"]:
        for off in [False, True]:
            for dc in [False, True]:
                t = "tex.level.%s.v4.f32.s32 D, [T, %s], %%rl%s%s;" % (
                    shape, coords(shape, "s32"), ", " + offs(shape) if off else "", ", %fr" if dc else "")
                add("ilevel_array", "ilevel_%s%s%s" % (shape, "_off" if off else "", "_dc" if dc else ""), t)
    # 2b. tex.level s32 with offsets on 1d/2d/3d
    for shape in ["1d", "2d", "3d"]:
        for dc in [False, True]:
            t = "tex.level.%s.v4.f32.s32 D, [T, %s], %%rl, %s%s;" % (shape, coords(shape, "s32"), offs(shape),
                                                                    ", %fr" if dc else "")
            add("ilevel_off", "ilevel_off_%s%s" % (shape, "_dc" if dc else ""), t)
    # 3. tex.grad with offsets (f32)
    for shape in ["1d", "2d", "a1d", "a2d", "3d", "cube", "acube"]:
        for dc in [False, True]:
            if shape in ("cube", "acube"):
                continue
            t = "tex.grad.%s.v4.f32.f32 D, [T, %s], %s, %s%s;" % (shape, coords(shape, "f32"), grads(shape, "f32"),
                                                                 offs(shape), ", %fr" if dc else "")
            add("grad_off", "grad_off_%s%s" % (shape, "_dc" if dc else ""), t)
    # 3b. tex.grad s32 coords
    for shape in ["1d", "2d", "3d", "a1d", "a2d"]:
        for off in [False, True]:
            for dc in [False, True]:
                t = "tex.grad.%s.v4.f32.s32 D, [T, %s], %s%s%s;" % (
                    shape, coords(shape, "s32"), grads(shape, "f32"), ", " + offs(shape) if off else "",
                    ", %fr" if dc else "")
                add("grad_int", "grad_int_%s%s%s" % (shape, "_off" if off else "", "_dc" if dc else ""), t)
    # 4. cube/acube with depth compare
    for shape in ["cube", "acube"]:
        for lod in ["", ".level", ".grad", ".base"]:
            for ty in ["f32"]:
                extra = {"" : "", ".base": "", ".level": ", %fl", ".grad": ", " + grads(shape, "f32")}[lod]
                t = "tex%s.%s.v4.f32.%s D, [T, %s]%s, %%fr;" % (lod, shape, ty, coords(shape, ty), extra)
                add("cube_dc", "cube_dc_%s%s" % (shape, lod.replace(".", "_")), t)
    # 4b. multisample
    for shape in ["2dms", "a2dms"]:
        for rty in ["f32", "s32"]:
            t = "tex.%s.v4.%s.s32 D, [T, %s];" % (shape, rty, coords(shape, "s32"))
            add("ms", "ms_%s_%s" % (shape, rty), t)
    # 5. quad-emulated grad
    for shape in ["3d", "cube", "acube", "1d", "2d", "a1d", "a2d"]:
        for dc in [False, True]:
            if shape in ("1d", "2d", "a1d", "a2d") and not dc:
                continue
            t = "tex.grad.%s.v4.f32.f32 D, [T, %s], %s%s;" % (shape, coords(shape, "f32"), grads(shape, "f32"),
                                                             ", %fr" if dc else "")
            add("grad_quad", "grad_quad_%s%s" % (shape, "_dc" if dc else ""), t)
    return out

# How the texture is named: a `.texref` (`ref`), a texture object parameter (`obj`), a handle
# loaded from memory (`reg`); with `.texmode_independent` and a sampler: a `.texref` and a
# `.samplerref` (`pair`), texture and sampler handles in registers (`regpair`).
HANDLES = ["ref", "obj", "reg", "pair", "regpair"]

def ptx(name, inst, handle):
    t = {"ref": "t", "pair": "t, s", "regpair": "%rd5, %rd6"}.get(handle, "%rd5")
    inst = inst.replace("T,", t + ",").replace("D,", "{%f10, %f11, %f12, %f13},")
    if ".v4.s32" in inst:
        inst = inst.replace("{%f10, %f11, %f12, %f13}", "{%r10, %r11, %r12, %r13}")
    h = "ld.param.u64 %rd5, [h];" if handle != "reg" else "ld.global.u64 %rd5, [%rd1];"
    if handle == "regpair":
        h += "\n  ld.param.u64 %rd6, [sh];"
    target = "sm_50, texmode_independent" if handle in ("pair", "regpair") else "sm_50"
    sampler = ".global .samplerref s = { filter_mode = linear, addr_mode_0 = wrap };\n" \
        if handle == "pair" else ""
    regs = []
    for b in ["ro", "gix", "giy"]:
        for k in range(1, 5):
            regs.append("  .reg .b32 %%%s%d;\n  mov.b32 %%%s%d, %%r1;" % (b, k, b, k))
    for b in ["gfx", "gfy"]:
        for k in range(1, 5):
            regs.append("  .reg .f32 %%%s%d;\n  mov.b32 %%%s%d, %%f1;" % (b, k, b, k))
    return f""".version 7.8
.target {target}
.address_size 64
.global .texref t;
{sampler}.visible .entry {name}(.param .u64 out, .param .u64 h, .param .u64 sh)
{{
  .reg .f32 %f<16>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .b32 %rl;
  .reg .f32 %fl, %fr;
  ld.param.u64 %rd1, [out];
  {h}
  mov.u32 %r1, %tid.x;
  cvt.rn.f32.u32 %f1, %r1;
  add.f32 %f3, %f1, 0f3F000000;
  mul.f32 %f4, %f1, 0f3E000000;
  mul.f32 %f5, %f1, 0f3D000000;
  xor.b32 %r3, %r1, 5;
  shr.u32 %r4, %r1, 2;
  shr.u32 %r5, %r1, 3;
  and.b32 %r9, %r1, 3;
  and.b32 %rl, %r1, 1;
  mul.f32 %fl, %f1, 0f3D000000;
  mul.f32 %fr, %f1, 0f3C000000;
{chr(10).join(regs)}
  {inst}
  st.global.v4.f32 [%rd1], {{%f10, %f11, %f12, %f13}};
  st.global.v4.s32 [%rd1+16], {{%r10, %r11, %r12, %r13}};
  ret;
}}
"""

TEX_OPS = ("TEX", "TLD", "TXD", "TXQ")

def texture_ops(cubin):
    """The texture lines of `cuobjdump -sass CUBIN`, reduced (module doc)."""
    s = subprocess.run([ORACLE + "/cuobjdump", "-sass", cubin], capture_output=True, text=True).stdout
    out = []
    for x in s.splitlines():
        if "/*0" not in x or "*/" not in x:
            continue
        t = x.split("*/", 1)[1].split("/*")[0].strip().strip("{}").strip().rstrip(";").strip()
        if t.startswith("@"):
            t = t.split(None, 1)[1]
        if not t.startswith(TEX_OPS):
            continue
        mn, _, rest = t.partition(" ")
        mn = mn.replace(".T", "").replace(".P", "") if mn.endswith((".T", ".P")) else mn
        ops = [o.strip() for o in rest.split(",")]
        ops = [o for o in ops if o and not (o == "RZ" or (o[0] == "R" and o[1:].isdigit()))]
        out.append(" ".join([mn] + ops))
    return out

def run_form(d, g, name, inst, handle, leafold):
    """(group, form name, ptxas ok, leafold ok, ptxas's texture ops, ours, ptxas's SASS, our error)."""
    form = f"{name}_{handle}"
    f = os.path.join(d, form + ".ptx")
    open(f, "w").write(ptx(name, inst, handle))
    p = subprocess.run([ORACLE + "/ptxas", "-arch=sm_50", f, "-o", f + ".p.cubin"],
                       capture_output=True, text=True)
    l = subprocess.run([leafold, "compile", "-arch=sm_50", f, "-o", f + ".l.cubin"],
                       capture_output=True, text=True)
    pok, lok = p.returncode == 0, l.returncode == 0
    theirs = texture_ops(f + ".p.cubin") if pok else None
    ours = texture_ops(f + ".l.cubin") if lok else None
    err = (l.stderr.strip().splitlines() or [""])[-1][:150] if not lok else ""
    perr = (p.stderr.strip().splitlines() or [""])[0][:120] if not pok else ""
    return (g, form, pok, lok, theirs, ours, err, perr, f)

def main():
    leafold = sys.argv[1]
    verbose = "-v" in sys.argv
    arg = lambda k: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else None
    only, hsel = arg("-k"), arg("-H")
    expect, write = arg("--expect"), arg("--write-matching")
    tab = {}
    d = tempfile.mkdtemp(prefix="texsweep")
    jobs = [(g, name, inst, handle) for g, name, inst in forms() if not only or g == only
            for handle in HANDLES if not hsel or handle == hsel]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        results = list(ex.map(lambda j: run_form(d, *j, leafold), jobs))
    matching, differing = [], []
    for g, form, pok, lok, theirs, ours, err, perr, f in results:
        t = tab.setdefault(g, [0, 0, 0, 0])
        t[3] += 1
        if pok:
            t[0] += 1
            t[1] += lok
            if lok and theirs == ours:
                t[2] += 1
                matching.append(form)
            elif lok:
                differing.append((form, theirs, ours))
        if verbose:
            if pok:
                print(f"{form}: ptxas=ok leafold={'ok' if lok else 'NO'}{' | ' + err if err else ''}\n"
                      f"    ptxas: {'; '.join(theirs)}" + (f"\n    ours:  {'; '.join(ours)}" if lok else ""))
            else:
                print(f"{form}: ptxas NO ({perr})")
    for form, theirs, ours in differing:
        print(f"DIFFERS {form}:\n    ptxas: {'; '.join(theirs)}\n    ours:  {'; '.join(ours)}")
    tot = [0, 0, 0, 0]
    for g, v in tab.items():
        print(f"{g}: compile {v[1]}/{v[0]}, ptxas's texture instructions {v[2]}/{v[1]} (of {v[3]} generated)")
        tot = [a + b for a, b in zip(tot, v)]
    print(f"total: compile {tot[1]}/{tot[0]}, ptxas's texture instructions {tot[2]}/{tot[1]} (of {tot[3]} generated)")
    if write:
        with open(write, "w") as out:
            out.write("# tex_sweep.py forms whose texture instructions equal ptxas 11.8's (--write-matching)\n")
            out.write("".join(m + "\n" for m in sorted(matching)))
    if expect:
        want = [x.strip() for x in open(expect) if x.strip() and not x.startswith("#")]
        if only or hsel:
            names = {f"{n}_{h}" for g, n, i in forms() if not only or g == only
                     for h in HANDLES if not hsel or h == hsel}
            want = [w for w in want if w in names]
        lost = sorted(set(want) - set(matching))
        for w in lost:
            print(f"REGRESSED {w}")
        unknown = sorted(set(want) - {f"{n}_{h}" for g, n, i in forms() for h in HANDLES})
        for w in unknown:
            print(f"UNKNOWN FORM {w}")
        if lost or unknown:
            sys.exit(1)

main()
