//! The text form of the IR, used by `--emit ir` and insta snapshots.
//!
//! In: a [`Function`] or [`Module`]. Out: text that depends only on the IR (entity numbers,
//! layout order, operand order), never on hashing or addresses, so it is deterministic.
//!
//! ```text
//! kernel @copy(A: 8 @0x0, OUT: 8 @0x8) {
//! block0:
//!     v0 = param.i64 [0x0]
//!     v1 = sreg.i32 %tid.x
//!     v2, v3 = load.global.v2.i32 [v0+8]
//!     v4 = icmp.ult.i32 v1, v2
//!     brif v4, block1(v1), block2
//! block1(v5: i32):
//!     ret
//! }
//! ```

use std::fmt::{self, Display, Formatter};

use super::{
    AddrWidth, BinaryOp, BlockCall, CacheOp, ConvOp, CvtaDir, Dim, Function, InstData, IntCC,
    Module, SpecialReg, Type, UnaryOp, Value,
};

impl Display for Type {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Type::I8 => "i8",
            Type::I16 => "i16",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::F16 => "f16",
            Type::F32 => "f32",
            Type::F64 => "f64",
            Type::Pred => "pred",
        })
    }
}

impl Display for super::Space {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Display for Dim {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        })
    }
}

impl Display for SpecialReg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SpecialReg::Tid(d) => write!(f, "%tid.{d}"),
            SpecialReg::Ntid(d) => write!(f, "%ntid.{d}"),
            SpecialReg::Ctaid(d) => write!(f, "%ctaid.{d}"),
            SpecialReg::Nctaid(d) => write!(f, "%nctaid.{d}"),
            SpecialReg::LaneId => f.write_str("%laneid"),
            SpecialReg::WarpId => f.write_str("%warpid"),
            SpecialReg::NWarpId => f.write_str("%nwarpid"),
            SpecialReg::GridId => f.write_str("%gridid"),
            SpecialReg::LaneMask(m) => write!(f, "%lanemask_{}", m.name()),
            SpecialReg::Clock => f.write_str("%clock"),
            SpecialReg::SmId => f.write_str("%smid"),
            SpecialReg::Clock64 => f.write_str("%clock64"),
            SpecialReg::NSmId => f.write_str("%nsmid"),
            SpecialReg::DynamicSmemSize => f.write_str("%dynamic_smem_size"),
            SpecialReg::TotalSmemSize => f.write_str("%total_smem_size"),
            SpecialReg::EnvReg(n) => write!(f, "%envreg{n}"),
            SpecialReg::GlobalTimer => f.write_str("%globaltimer"),
            SpecialReg::GlobalTimerLo => f.write_str("%globaltimer_lo"),
            SpecialReg::GlobalTimerHi => f.write_str("%globaltimer_hi"),
            SpecialReg::Pm(n) => write!(f, "%pm{n}"),
            SpecialReg::Pm64(n) => write!(f, "%pm{n}_64"),
        }
    }
}

impl BinaryOp {
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::MulHiS => "mulhi.s",
            BinaryOp::MulHiU => "mulhi.u",
            BinaryOp::Shl => "shl",
            BinaryOp::ShrU => "shr.u",
            BinaryOp::ShrS => "shr.s",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
            BinaryOp::MinS => "min.s",
            BinaryOp::MinU => "min.u",
            BinaryOp::MaxS => "max.s",
            BinaryOp::MaxU => "max.u",
            BinaryOp::DivU => "div.u",
            BinaryOp::DivS => "div.s",
            BinaryOp::RemU => "rem.u",
            BinaryOp::AddSatS => "add.sat.s",
            BinaryOp::SubSatS => "sub.sat.s",
            BinaryOp::RemS => "rem.s",
        }
    }
}

impl UnaryOp {
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Not => "not",
            UnaryOp::Neg => "neg",
        }
    }
}

impl ConvOp {
    pub fn name(self) -> &'static str {
        match self {
            ConvOp::Sext => "sext",
            ConvOp::Zext => "zext",
            ConvOp::Trunc => "trunc",
        }
    }
}

impl IntCC {
    pub fn name(self) -> &'static str {
        match self {
            IntCC::Eq => "eq",
            IntCC::Ne => "ne",
            IntCC::Slt => "slt",
            IntCC::Sle => "sle",
            IntCC::Sgt => "sgt",
            IntCC::Sge => "sge",
            IntCC::Ult => "ult",
            IntCC::Ule => "ule",
            IntCC::Ugt => "ugt",
            IntCC::Uge => "uge",
        }
    }
}

struct Call<'a>(&'a BlockCall);

impl Display for Call<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.block)?;
        if !self.0.args.is_empty() {
            write!(f, "(")?;
            write_list(f, &self.0.args)?;
            write!(f, ")")?;
        }
        Ok(())
    }
}

fn write_list(f: &mut Formatter<'_>, values: &[Value]) -> fmt::Result {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{v}")?;
    }
    Ok(())
}

/// `[v3]`, `[v3+8]` or `[v3-4]`.
struct Addr(Value, i32);

impl Display for Addr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.1 {
            0 => write!(f, "[{}]", self.0),
            o if o > 0 => write!(f, "[{}+{}]", self.0, o),
            o => write!(f, "[{}{}]", self.0, o),
        }
    }
}

/// `.cg`, `.volatile`, ...; nothing for the default operator.
struct Cache(CacheOp);

impl Display for Cache {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            CacheOp::Default => Ok(()),
            c => write!(f, ".{}", c.name()),
        }
    }
}

/// The instruction text after `results = `, using the module for variable names if given.
// Long by design: the dispatch over `InstData`, one short arm per IR instruction kind.
pub(crate) fn write_inst(
    f: &mut Formatter<'_>,
    func: &Function,
    data: &InstData,
    module: Option<&Module>,
) -> fmt::Result {
    // The type suffix of ops whose type follows from an operand; `?` for a foreign value
    // (the verifier reports those; printing must not panic on them).
    let ty = |v: Value| {
        func.values
            .get(v)
            .map_or("?".to_string(), |d| d.ty.to_string())
    };
    match data {
        InstData::Iconst { ty, imm } => {
            // Print the value as the signed number of its width: `iconst.i32 -1`, not 4294967295.
            let shift = 64 - ty.bits().min(64);
            let signed = ((imm << shift) as i64) >> shift;
            // Small numbers read best in decimal, large ones (addresses, masks) in hex.
            if signed.unsigned_abs() < 0x1_0000 {
                write!(f, "iconst.{ty} {signed}")
            } else if signed < 0 {
                write!(f, "iconst.{ty} -0x{:x}", signed.unsigned_abs())
            } else {
                write!(f, "iconst.{ty} 0x{signed:x}")
            }
        }
        InstData::Fconst { ty, bits } => write!(f, "fconst.{ty} 0x{bits:x}"),
        InstData::LoadParam { ty, offset } => write!(f, "param.{ty} [0x{offset:x}]"),
        InstData::SpecialReg { reg } => write!(f, "sreg.{} {reg}", reg.ty()),
        InstData::KernelDesc { ty, entry } => {
            let name = module
                .and_then(|m| m.kernel_descs.get(*entry as usize))
                .map_or_else(|| format!("#{entry}"), |n| format!("@{n}"));
            write!(f, "kernel_desc.{ty} {name}")
        }
        InstData::SymbolAddr { ty, var } => {
            let (space, name) = match module.and_then(|m| m.vars.get(*var)) {
                Some(v) => (v.space.name(), format!("@{}", v.name)),
                None => ("?", format!("{var}")),
            };
            write!(f, "addr.{space}.{ty} {name}")
        }
        InstData::Unary { op, arg } => write!(f, "{}.{} {arg}", op.name(), ty(*arg)),
        InstData::Binary { op, args } => {
            let t = ty(args[0]);
            write!(f, "{}.{t} {}, {}", op.name(), args[0], args[1])
        }
        InstData::MulWide { signed, args } => {
            // Like PTX `mul.wide.s32`: the suffix is the operand type, the result is twice it.
            let s = if *signed { "s" } else { "u" };
            write!(f, "mulwide.{s}.{} {}, {}", ty(args[0]), args[0], args[1])
        }
        InstData::Convert { op, ty, arg } => write!(f, "{}.{ty} {arg}", op.name()),
        InstData::Select { cond, args } => {
            write!(f, "select.{} {cond}, {}, {}", ty(args[0]), args[0], args[1])
        }
        InstData::Icmp { cc, args } => {
            let t = ty(args[0]);
            write!(f, "icmp.{}.{t} {}, {}", cc.name(), args[0], args[1])
        }
        InstData::Load {
            space,
            ty,
            width,
            addr,
            offset,
            cache,
        } => {
            let v = if *width > 1 {
                format!(".v{width}")
            } else {
                String::new()
            };
            let c = Cache(*cache);
            write!(f, "load.{space}{c}{v}.{ty} {}", Addr(*addr, *offset))
        }
        InstData::Store {
            space,
            ty,
            addr,
            offset,
            values,
            cache,
        } => {
            let v = if values.len() > 1 {
                format!(".v{}", values.len())
            } else {
                String::new()
            };
            let c = Cache(*cache);
            write!(f, "store.{space}{c}{v}.{ty} {}, ", Addr(*addr, *offset))?;
            write_list(f, values)
        }
        InstData::Cvta {
            dir,
            space,
            ty,
            arg,
        } => {
            let d = match dir {
                CvtaDir::ToGeneric => "",
                CvtaDir::FromGeneric => "to.",
            };
            write!(f, "cvta.{d}{space}.{ty} {arg}")
        }
        InstData::Jump { dest } => write!(f, "jump {}", Call(dest)),
        InstData::Brif {
            cond,
            then_dest,
            else_dest,
        } => write!(f, "brif {cond}, {}, {}", Call(then_dest), Call(else_dest)),
        InstData::Return => write!(f, "ret"),
        InstData::Trap => write!(f, "trap"),
        InstData::BarrierReg {
            red,
            wait,
            id,
            count,
            count_reg,
            args,
        } => {
            match red {
                Some(op) => write!(f, "barrier.red.{}", op.name())?,
                None if *wait => write!(f, "barrier")?,
                None => write!(f, "barrier.arrive")?,
            }
            let mut rest = args.iter();
            match id {
                Some(i) => write!(f, " {i}")?,
                None => write!(f, " {}", rest.next().ok_or(std::fmt::Error)?)?,
            }
            if let Some(c) = count {
                write!(f, ", {c}")?;
            }
            if *count_reg {
                write!(f, ", {}", rest.next().ok_or(std::fmt::Error)?)?;
            }
            for a in rest {
                write!(f, ", {a}")?;
            }
            Ok(())
        }
        InstData::Prefetch {
            space,
            level,
            addr,
            offset,
        } => write!(f, "prefetch.{space}.L{level} {}", Addr(*addr, *offset)),
        InstData::Stack { op, arg } => {
            match op {
                crate::ir::StackOp::Alloca { align } => write!(f, "alloca.align{align}")?,
                crate::ir::StackOp::Save => write!(f, "stacksave")?,
                crate::ir::StackOp::Restore => write!(f, "stackrestore")?,
            }
            if let Some(a) = arg {
                write!(f, " {a}")?;
            }
            Ok(())
        }
        InstData::Barrier => write!(f, "barrier"),
        InstData::Float { op, args } => {
            write!(f, "{}", op.display_name())?;
            for (i, a) in args.iter().enumerate() {
                let sep = if i == 0 { " " } else { ", " };
                write!(f, "{sep}{a}")?;
            }
            Ok(())
        }
        InstData::NamedBarrier { id, count, wait } => {
            write!(
                f,
                "{} {id}",
                if *wait { "barrier" } else { "barrier.arrive" }
            )?;
            match count {
                Some(c) => write!(f, ", {c}"),
                None => Ok(()),
            }
        }
        InstData::BarrierRed { op, id, count, arg } => {
            write!(f, "barrier.red.{} {id}", op.name())?;
            if let Some(c) = count {
                write!(f, ", {c}")?;
            }
            write!(f, ", {arg}")
        }
        InstData::MemBar { scope } => write!(
            f,
            "membar.{}",
            match scope {
                super::MemScope::Cta => "cta",
                super::MemScope::Gl => "gl",
                super::MemScope::Sys => "sys",
                super::MemScope::Warp => "warp",
                super::MemScope::Yield => "yield",
            }
        ),
        InstData::Atomic {
            op,
            space,
            ty,
            addr,
            offset,
            args,
        } => {
            write!(f, "atom.{}.{}.{ty} [{addr}", space.name(), op.name())?;
            if *offset != 0 {
                write!(f, "{offset:+}")?;
            }
            write!(f, "]")?;
            for a in args {
                write!(f, ", {a}")?;
            }
            Ok(())
        }
        InstData::Surface { access, args } => {
            use crate::surface::{SurfHandle, SurfOp};
            match access.op {
                SurfOp::Load => write!(f, "suld")?,
                SurfOp::Store => write!(f, "sust")?,
                SurfOp::StoreFormatted => write!(f, "sust.p")?,
                SurfOp::Red(op) => write!(f, "sured.{}", op.name())?,
                SurfOp::Query(q) => write!(f, "suq.{}", q.ptx())?,
                SurfOp::RedFormatted(op) => write!(f, "sured.p.{}", op.name())?,
            }
            if !matches!(access.op, SurfOp::Query(_)) {
                write!(f, ".{}.{}", access.shape.ptx(), access.clamp.ptx())?;
            }
            if access.width > 1 {
                write!(f, ".v{}", access.width)?;
            }
            write!(f, ".{} [", access.ty)?;
            let mut rest = &args[..];
            match access.handle {
                SurfHandle::Bound(i) => write!(f, "surf{i}")?,
                SurfHandle::Bindless => {
                    write!(f, "{}", rest[0])?;
                    rest = &rest[1..];
                }
            }
            let n = access.coord_operands().min(rest.len());
            for c in &rest[..n] {
                write!(f, ", {c}")?;
            }
            write!(f, "]")?;
            for d in &rest[n..] {
                write!(f, ", {d}")?;
            }
            Ok(())
        }
        InstData::Vote { mode, arg } => write!(f, "vote.{} {arg}", mode.name()),
        InstData::Collective { op, args } => {
            write!(f, "{}", op.name())?;
            for (k, a) in args.iter().enumerate() {
                write!(f, "{} {a}", if k == 0 { "" } else { "," })?;
            }
            Ok(())
        }
        InstData::Texture { op, handle, args } => {
            match op {
                super::tex::TexOp::Sample {
                    shape,
                    result,
                    int_coords,
                } => write!(
                    f,
                    "tex.{}.{}.{}",
                    shape.name(),
                    result.name(),
                    if *int_coords { "s32" } else { "f32" }
                )?,
                super::tex::TexOp::Query(q) => write!(f, "txq.{}", q.name())?,
                super::tex::TexOp::Gather {
                    comp,
                    shape,
                    result,
                    offset,
                    depth,
                } => write!(
                    f,
                    "tld4.{}.{}.{}{}{}",
                    ["r", "g", "b", "a"][usize::from(*comp & 3)],
                    shape.name(),
                    result.name(),
                    if *offset { ".offset" } else { "" },
                    if *depth { ".depth" } else { "" }
                )?,
                super::tex::TexOp::SampleLod {
                    shape,
                    result,
                    int_coords,
                    lod,
                    offset,
                    depth,
                } => write!(
                    f,
                    "tex.{}.{}.{}.{lod:?}{}{}",
                    shape.name(),
                    result.name(),
                    if *int_coords { "s32" } else { "f32" },
                    if *offset { ".offset" } else { "" },
                    if *depth { ".depth" } else { "" }
                )?,
                super::tex::TexOp::QueryLevel(q) => write!(f, "txq.level.{}", q.name())?,
                super::tex::TexOp::SampleMs { array, result } => write!(
                    f,
                    "tex.{}.{}.s32",
                    if *array { "a2dms" } else { "2dms" },
                    result.name()
                )?,
            }
            let coords = match handle {
                super::tex::TexHandle::Bound(k) => {
                    write!(f, " tex{k}")?;
                    &args[..]
                }
                super::tex::TexHandle::Bindless => {
                    write!(f, " [{}]", args[0])?;
                    &args[1..]
                }
                super::tex::TexHandle::Combined => {
                    write!(f, " [{}, sampler]", args[0])?;
                    &args[1..]
                }
                super::tex::TexHandle::Paired { tex, samp } => {
                    write!(f, " tex{tex} samp{samp}")?;
                    &args[..]
                }
                super::tex::TexHandle::Sampler(samp) => {
                    write!(f, " samp{samp}")?;
                    &args[..]
                }
            };
            for a in coords {
                write!(f, ", {a}")?;
            }
            Ok(())
        }
        InstData::ExternCall {
            callee,
            args,
            arg_regs,
        } => {
            write!(f, "call.extern #{callee} (")?;
            for (k, (a, r)) in args.iter().zip(arg_regs).enumerate() {
                write!(f, "{}R{r}={a}", if k == 0 { "" } else { ", " })?;
            }
            write!(f, ")")
        }
        InstData::SubReturn { values } => {
            write!(f, "ret.sub")?;
            for (k, v) in values.iter().enumerate() {
                write!(f, "{}{v}", if k == 0 { " " } else { ", " })?;
            }
            Ok(())
        }
        InstData::Shfl { mode, args } => {
            let [a, b, c] = args;
            write!(f, "shfl.{} {a}, {b}, {c}", mode.name())
        }
        InstData::Bits { op, args } => {
            match op {
                super::BitOp::Video(v) => write!(f, "{}", v.name())?,
                super::BitOp::SatCvt {
                    src_signed,
                    dst_bits,
                    dst_signed,
                } => {
                    let s = |x: &bool| if *x { "s" } else { "u" };
                    write!(f, "cvt.sat.{}{dst_bits}.{}32", s(dst_signed), s(src_signed))?
                }
                _ => write!(f, "{}", op.name())?,
            }
            for (k, a) in args.iter().enumerate() {
                write!(f, "{} {a}", if k == 0 { "" } else { "," })?;
            }
            Ok(())
        }
    }
}

/// Print a function, naming module variables when the module is known.
pub(crate) fn write_function(
    f: &mut Formatter<'_>,
    func: &Function,
    module: Option<&Module>,
) -> fmt::Result {
    write!(f, "kernel @{}(", func.name)?;
    for (i, p) in func.params.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{}: {} @0x{:x}", p.name, p.size, p.offset)?;
    }
    writeln!(f, ") {{")?;
    for &block in &func.layout {
        let Some(data) = func.blocks.get(block) else {
            writeln!(f, "{block}: <missing>")?;
            continue;
        };
        write!(f, "{block}")?;
        if !data.params.is_empty() {
            write!(f, "(")?;
            for (i, &p) in data.params.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                let ty = func
                    .values
                    .get(p)
                    .map_or("?".to_string(), |d| d.ty.to_string());
                write!(f, "{p}: {ty}")?;
            }
            write!(f, ")")?;
        }
        writeln!(f, ":")?;
        for &inst in &data.insts {
            let Some(node) = func.insts.get(inst) else {
                writeln!(f, "    <missing {inst}>")?;
                continue;
            };
            write!(f, "    ")?;
            if !node.results.is_empty() {
                write_list(f, &node.results)?;
                write!(f, " = ")?;
            }
            write_inst(f, func, &node.data, module)?;
            writeln!(f)?;
        }
    }
    writeln!(f, "}}")
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_function(f, self, None)
    }
}

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (var, v) in self.vars.iter() {
            write!(
                f,
                ".{} @{}: {} bytes, align {}",
                v.space.name(),
                v.name,
                v.size,
                v.align
            )?;
            if let Some(init) = &v.init {
                write!(f, ", init [")?;
                for (i, b) in init.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    write!(f, "{b:02x}")?;
                }
                write!(f, "]")?;
            }
            if let Some(addrs) = self.addr_inits.get(var).filter(|a| !a.is_empty()) {
                write!(f, ", addresses [")?;
                for (i, a) in addrs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    let target = self
                        .vars
                        .get(a.target)
                        .map_or_else(|| a.target.to_string(), |t| format!("@{}", t.name));
                    write!(f, "+{}: ", a.offset)?;
                    match a.width {
                        AddrWidth::Word(n) => write!(f, "u{} ", 8 * u32::from(n))?,
                        AddrWidth::Byte(s) => write!(f, "byte {} of ", s / 8)?,
                    }
                    if a.generic {
                        write!(f, "generic({target})")?;
                    } else {
                        write!(f, "{target}")?;
                    }
                    match a.addend {
                        0 => {}
                        k if k < 0 => write!(f, " - {}", k.unsigned_abs())?,
                        k => write!(f, " + {k}")?,
                    }
                }
                write!(f, "]")?;
            }
            writeln!(f, "  ; {var}")?;
        }
        for (i, func) in self.functions.iter().enumerate() {
            if i > 0 || !self.vars.is_empty() {
                writeln!(f)?;
            }
            write_function(f, func, Some(self))?;
        }
        Ok(())
    }
}
