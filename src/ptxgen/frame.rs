//! The frame of a generated kernel: in: a [`Gen`] with its body drawn; out: the PTX text
//! ([`kernel_text`]) and the parts around the body: prologue, input, output, shared and
//! local regions, epilogue.

use super::*;

/// The PTX text of a generated kernel: header, the entry `fz` with its parameters, the
/// register declarations (f32 and f64 only when used), the shared array `sh` of `shared`
/// bytes and the local array `lc` when asked, then `g`'s body.
pub(super) fn kernel_text(g: &Gen, addr64: bool, shared: Option<u32>, local: bool) -> String {
    let ptr = if addr64 { "u64" } else { "u32" };
    let mut ptx = String::new();
    let _ = writeln!(
        ptx,
        ".version 7.0\n.target sm_50\n.address_size {}\n",
        if addr64 { 64 } else { 32 }
    );
    let _ = writeln!(
        ptx,
        ".visible .entry fz(.param .{ptr} pin0, .param .{ptr} pin1, .param .{ptr} pout, \
         .param .u32 s0, .param .u32 s1, .param .u64 s2)\n{{"
    );
    let _ = writeln!(ptx, "    .reg .b32 %r<{}>;", g.n32 + 1);
    let _ = writeln!(ptx, "    .reg .b64 %rd<{}>;", g.n64 + 1);
    let _ = writeln!(ptx, "    .reg .pred %p<{}>;", g.npred + 1);
    if g.nf32 > 0 {
        let _ = writeln!(ptx, "    .reg .f32 %f<{}>;", g.nf32 + 1);
    }
    if g.nf64 > 0 {
        let _ = writeln!(ptx, "    .reg .f64 %fd<{}>;", g.nf64 + 1);
    }
    if let Some(bytes) = shared {
        let _ = writeln!(ptx, "    .shared .align 16 .b8 sh[{bytes}];");
    }
    if local {
        let _ = writeln!(ptx, "    .local .align 16 .b8 lc[{LOCAL_BYTES}];");
    }
    ptx.push_str(&g.body);
    ptx.push_str("}\n");
    ptx
}

impl Gen<'_, '_> {
    /// The prologue: `%tid.x`, `%ctaid.x`, `%ntid.x`, the scalar parameters and the global
    /// thread id, all usable values; returns the thread id and the global one.
    pub(super) fn prologue(&mut self) -> (String, String) {
        let (tid, cta, ntid) = (self.r32(), self.r32(), self.r32());
        self.emit(&format!("mov.u32 {tid}, %tid.x;"));
        self.emit(&format!("mov.u32 {cta}, %ctaid.x;"));
        self.emit(&format!("mov.u32 {ntid}, %ntid.x;"));
        let (s0, s1) = (self.r32(), self.r32());
        self.emit(&format!("ld.param.u32 {s0}, [s0];"));
        self.emit(&format!("ld.param.u32 {s1}, [s1];"));
        let s2 = self.r64();
        self.emit(&format!("ld.param.u64 {s2}, [s2];"));
        self.v32
            .extend([tid.clone(), cta.clone(), ntid.clone(), s0, s1]);
        self.v64.push(s2);
        let gtid = self.r32();
        self.emit(&format!("mad.lo.s32 {gtid}, {cta}, {ntid}, {tid};"));
        self.v32.push(gtid.clone());
        (tid, gtid)
    }

    /// The pointer parameters, and the two inputs as read-only regions (global, possibly
    /// through `cvta.to.global`, or generic); returns `pout`'s register.
    pub(super) fn input_regions(&mut self, addr64: bool) -> String {
        let ptr = if addr64 { "u64" } else { "u32" };
        let mut ins = Vec::new();
        for name in ["pin0", "pin1", "pout"] {
            let r = self.new_ptr(addr64);
            self.emit(&format!("ld.param.{ptr} {r}, [{name}];"));
            ins.push(r);
        }
        for input in ins.iter().take(2) {
            let kind = if self.src.chance(50) {
                Kind::Global
            } else {
                Kind::Generic
            };
            let mut base = input.clone();
            if kind == Kind::Global && self.src.chance(50) {
                let c = self.new_ptr(addr64);
                self.emit(&format!("cvta.to.global.{ptr} {c}, {base};"));
                base = c;
            }
            self.regions.push(Region {
                base,
                wide: addr64,
                kind,
                bytes: INPUT_ELEMS * 8 * 2,
                writable: false,
                shared_other: false,
                shared_own: false,
            });
        }
        ins.swap_remove(2)
    }

    /// The thread's output slice, `pout + gtid · SLICE`, global or generic: its first half a
    /// writable region (the second half is the epilogue's). Returns its register and kind.
    pub(super) fn output_region(&mut self, addr64: bool, gtid: &str, pout: &str) -> (String, Kind) {
        let out = self.thread_slice(addr64, gtid, pout, SLICE);
        let out_kind = if self.src.chance(50) {
            Kind::Global
        } else {
            Kind::Generic
        };
        self.regions.push(Region {
            base: out.clone(),
            wide: addr64,
            kind: out_kind,
            bytes: SLICE / 2,
            writable: true,
            shared_other: false,
            shared_own: false,
        });
        (out, out_kind)
    }

    /// The epilogue: the last few 32- and 64-bit values into the second half of the output
    /// slice `out`, `ret`, then the out-of-line blocks.
    pub(super) fn epilogue(&mut self, out: &str, out_kind: Kind) {
        let space = if out_kind == Kind::Global {
            ".global"
        } else {
            ""
        };
        let n32 = self.v32.len();
        for (k, v) in self.v32[n32.saturating_sub(4)..]
            .to_vec()
            .iter()
            .enumerate()
        {
            self.emit(&format!(
                "st{space}.u32 [{out}+{}], {v};",
                SLICE / 2 + 4 * k as u32
            ));
        }
        let n64 = self.v64.len();
        for (k, v) in self.v64[n64.saturating_sub(4)..]
            .to_vec()
            .iter()
            .enumerate()
        {
            self.emit(&format!(
                "st{space}.u64 [{out}+{}], {v};",
                SLICE / 2 + 16 + 8 * k as u32
            ));
        }
        self.emit("ret;");
        // Out-of-line blocks, after the `ret`.
        for t in std::mem::take(&mut self.tail) {
            self.body.push_str(&t);
        }
    }
}

impl<'s, 'a> Gen<'s, 'a> {
    /// A generator with nothing emitted, drawing from `src`.
    pub(super) fn new(src: &'s mut Source<'a>) -> Self {
        Gen {
            src,
            body: String::new(),
            n32: 0,
            n64: 0,
            npred: 0,
            nlabel: 0,
            v32: Vec::new(),
            v64: Vec::new(),
            regions: Vec::new(),
            depth: 0,
            budget: 0,
            sh_written: false,
            sh_read_other: false,
            diverged: false,
            nf32: 0,
            nf64: 0,
            tail: Vec::new(),
        }
    }

    /// A new pointer to the `slice`-byte slice of thread `gtid` from `base`:
    /// `base + gtid · slice`.
    pub(super) fn thread_slice(
        &mut self,
        addr64: bool,
        gtid: &str,
        base: &str,
        slice: u32,
    ) -> String {
        let p = self.new_ptr(addr64);
        if addr64 {
            let x = self.r64();
            self.emit(&format!("mul.wide.u32 {x}, {gtid}, {slice};"));
            self.emit(&format!("add.s64 {p}, {base}, {x};"));
        } else {
            self.emit(&format!("mad.lo.s32 {p}, {gtid}, {slice}, {base};"));
        }
        p
    }

    /// A pointer register of the address width.
    pub(super) fn new_ptr(&mut self, addr64: bool) -> String {
        if addr64 {
            self.r64()
        } else {
            self.r32()
        }
    }

    /// The shared array's regions: the whole array (reads, after a barrier) and the thread's
    /// own slice, which it fills first (`tid`, `gtid`: its thread and global thread ids).
    pub(super) fn shared_regions(
        &mut self,
        addr64: bool,
        ptr: &str,
        tid: &str,
        gtid: &str,
        shared_bytes: u32,
    ) {
        let wide = addr64 && self.src.chance(50);
        let generic = self.src.chance(35);
        let (base, kind, wide) = if generic {
            let (s, c) = (self.new_ptr(addr64), self.new_ptr(addr64));
            self.emit(&format!("mov.{ptr} {s}, sh;"));
            self.emit(&format!("cvta.shared.{ptr} {c}, {s};"));
            (c, Kind::Generic, addr64)
        } else if wide {
            let s = self.r64();
            self.emit(&format!("mov.u64 {s}, sh;"));
            (s, Kind::Shared, true)
        } else {
            let s = self.r32();
            self.emit(&format!("mov.u32 {s}, sh;"));
            (s, Kind::Shared, false)
        };
        let own = if wide {
            let (x, o) = (self.r64(), self.r64());
            self.emit(&format!("mul.wide.u32 {x}, {tid}, {SHARED_SLICE};"));
            self.emit(&format!("add.s64 {o}, {base}, {x};"));
            o
        } else {
            let o = self.r32();
            self.emit(&format!("mad.lo.s32 {o}, {tid}, {SHARED_SLICE}, {base};"));
            o
        };
        // Every byte a thread may read holds a defined value: each thread fills its own
        // slice, and a barrier publishes the slices before anyone reads another's. (Reading
        // bytes nothing wrote gives zero in both of verify's models but garbage on a GPU,
        // which `scripts/hwcheck.sh` showed; `Launch::undefined_uninit`.)
        self.fill(&own, kind, gtid, SHARED_SLICE);
        self.emit("bar.sync 0;");
        let whole = 1u32 << (31 - shared_bytes.leading_zeros());
        self.regions.push(Region {
            base,
            wide,
            kind,
            bytes: whole,
            writable: false,
            shared_other: true,
            shared_own: false,
        });
        self.regions.push(Region {
            base: own,
            wide,
            kind,
            bytes: SHARED_SLICE,
            writable: true,
            shared_other: false,
            shared_own: true,
        });
    }

    /// The local array's region, filled first with defined values.
    pub(super) fn local_region(&mut self, addr64: bool, ptr: &str, gtid: &str) {
        let generic = self.src.chance(35);
        let (base, kind, wide) = if generic {
            let (s, c) = (self.new_ptr(addr64), self.new_ptr(addr64));
            self.emit(&format!("mov.{ptr} {s}, lc;"));
            self.emit(&format!("cvta.local.{ptr} {c}, {s};"));
            (c, Kind::Generic, addr64)
        } else if addr64 && self.src.chance(50) {
            let s = self.r64();
            self.emit(&format!("mov.u64 {s}, lc;"));
            (s, Kind::Local, true)
        } else {
            let s = self.r32();
            self.emit(&format!("mov.u32 {s}, lc;"));
            (s, Kind::Local, false)
        };
        self.fill(&base, kind, gtid, LOCAL_BYTES);
        self.regions.push(Region {
            base,
            wide,
            kind,
            bytes: LOCAL_BYTES,
            writable: true,
            shared_other: false,
            shared_own: false,
        });
    }
}
