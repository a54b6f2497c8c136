//! `tex.2dms` and `tex.a2dms`: one sample of a multisample texture.
//!
//! In: `tex.<2dms|a2dms>.v4.<f32|s32|u32>.s32 d, [t, {c0, c1, c2, c3}]` (also with a
//! `.samplerref` in independent mode, `[t, s, {..}]`; the sampler plays no part in a texel
//! fetch). The coordinate vector is, as ptxas 11.8 reads it (it puts `c0` in the `.MS`
//! instruction's sample register and clamps `c1` of `a2dms` as a layer):
//! `2dms {sample, x, y, unused}`, `a2dms {sample, layer, x, y}`. Out: one
//! [`TexOp::SampleMs`] whose operands are the sample, the layer (`a2dms`), x and y; the
//! unused element is read (it must be a valid operand) and dropped. Levels, gradients,
//! offsets, a depth reference and float coordinates are refused, as ptxas refuses them.

use super::super::FnBuilder;
use crate::ir::tex::{TexOp, TexType};
use crate::ir::{Type, Value};
use crate::ptx::ast::{self, Instruction, Modifier};

/// Whether `ins` is a multisample `tex`: `Some(array)` for `.2dms` (false) or `.a2dms`.
pub(super) fn ms_shape(ins: &Instruction) -> Option<bool> {
    ins.mods.iter().find_map(|m| match m {
        Modifier::Flag(f) if *f == "2dms" => Some(false),
        Modifier::Flag(f) if *f == "a2dms" => Some(true),
        _ => None,
    })
}

impl FnBuilder<'_, '_> {
    /// `tex.2dms`/`tex.a2dms` (module essay).
    pub(super) fn texture_ms(&mut self, ins: &Instruction, array: bool) -> Option<()> {
        let shape = if array { "a2dms" } else { "2dms" };
        for m in &ins.mods {
            match m {
                Modifier::Flag(f) if *f == shape => {}
                Modifier::Type(_) | Modifier::Vec(4) => {}
                _ => {
                    let what = format!("tex.{shape} takes no .{}", m.text());
                    return self.unsupported(ins, &what);
                }
            }
        }
        let result = match ins.types()[..] {
            [ast::Type::F32, ast::Type::S32] => TexType::F32,
            [ast::Type::S32, ast::Type::S32] => TexType::S32,
            [ast::Type::U32, ast::Type::S32] => TexType::U32,
            _ => {
                let what =
                    format!("tex.{shape} takes .f32, .s32 or .u32 results and .s32 coordinates");
                return self.unsupported(ins, &what);
            }
        };
        if ins.vector() != Some(4) {
            return self.unsupported(ins, "tex needs .v4");
        }
        if ins.operands.len() != 2 {
            let what = format!(
                "tex.{shape} takes d, [t, {{c}}] only (no level, offsets or depth reference)"
            );
            return self.unsupported(ins, &what);
        }
        let (t, samp, items, span) = self.tex_operands(ins, 2)?;
        if items.len() != 4 {
            self.error(
                span,
                format!(
                    "tex.{shape} takes 4 coordinates ({}), got {}",
                    if array {
                        "sample, layer, x, y"
                    } else {
                        "sample, x, y, unused"
                    },
                    items.len()
                ),
            );
            return None;
        }
        let (handle, h) = self.fetch_handle(t, samp)?;
        let mut args: Vec<Value> = h.into_iter().collect();
        let op = TexOp::SampleMs { array, result };
        for (k, c) in items.iter().enumerate() {
            let v = self.read(c, Type::I32, Some(ast::Type::S32))?;
            if k < op.coords() {
                args.push(v);
            }
        }
        self.texture_results(&ins.operands[0], op, handle, &args, result)
    }
}
