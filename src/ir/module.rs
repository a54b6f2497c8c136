//! Module-level data of the IR: variables ([`VarData`]) with their scope and initializers
//! (addresses of other symbols as [`AddrInit`]s), and the [`Module`] that holds the functions,
//! the variables and the layout of shared and local memory.
//!
//! In: what the builder declares. Out: the module every later pass reads. Invariant: the
//! layout functions place each variable once, aligned, in declaration order.

use super::*;

/// A module variable: its space, size, alignment and optional initial bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarData {
    pub name: String,
    pub space: Space,
    pub size: u32,
    pub align: u32,
    /// Initial contents (at most `size` bytes; the rest is zero). `None`: no initializer.
    pub init: Option<Vec<u8>>,
}

/// An address in a variable's initializer (`p = x`, `generic(x)+8`, `0xff00(x)`). Its bytes
/// in [`VarData::init`] are zero; whoever lays memory out writes the address there: `eval`
/// directly, the driver as a data relocation of the cubin (`R_CUDA_G64`, ...) that a loader
/// (the simulator's included) applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrInit {
    /// Byte offset in the variable.
    pub offset: u32,
    /// The `.global` or `.const` variable whose address it is.
    pub target: GlobalVar,
    /// `generic(x)`: the generic address. For a `.global` variable it is the same as the
    /// plain one (the global window is the identity); for a `.const` one the plain address
    /// is its offset in the const space, the generic one lies in the const window.
    pub generic: bool,
    /// Added to the address (wrapping): `x + 8`.
    pub addend: i64,
    pub width: AddrWidth,
}

/// How much of the address an [`AddrInit`] stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrWidth {
    /// The low 4 or 8 bytes, little-endian (a `.u32` or `.u64` element).
    Word(u8),
    /// One byte: bits `shift..shift + 8` of the address (`mask()`, e.g. `0xff00(x)` has shift
    /// 8), into the element's lowest byte.
    Byte(u8),
}

/// Where a variable was declared. ptxas lays out a kernel's `.shared` variables in this
/// order: a `.visible` kernel's own, then the module's, then those of the `.func`s it inlines
/// (by the position of each function's first declaration in the file), then a non-visible
/// kernel's own; declaration order within each. The derived `Ord` is that order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VarScope {
    /// Declared in the body of a `.visible` kernel.
    Kernel,
    /// Declared at module scope.
    #[default]
    Module,
    /// Declared in the body of an inlined `.func`: the index of the function's first
    /// declaration among the module's functions.
    Callee(u32),
    /// Declared in the body of a kernel that is not `.visible`.
    HiddenKernel,
}

/// One kernel's static shared memory, as ptxas allocates it: only the `.shared` variables the
/// kernel names (its inlined callees' included), in [`VarScope`] order, each at its
/// alignment; the dynamic (`extern`, unsized) arrays start at `size`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedLayout {
    /// The byte offset of every `.shared` variable the kernel names, dynamic ones included.
    pub offsets: HashMap<GlobalVar, u32>,
    /// The size of the static part: the end of the last variable, rounded up to 16 (to the
    /// dynamic arrays' alignment) when the module declares a dynamic array.
    pub size: u32,
    /// The section's alignment: the largest variable alignment, at least 16 when the module
    /// declares a dynamic array.
    pub align: u32,
    /// Whether the kernel gets a `.nv.shared.<kernel>` section at all: it names a variable,
    /// or the module declares a dynamic array (then every kernel gets one, perhaps empty).
    pub section: bool,
}

/// A PTX module: variables and kernels.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub vars: PrimaryMap<GlobalVar, VarData>,
    /// Where each variable was declared ([`VarScope::Module`] unless `build` says otherwise).
    pub var_scopes: SecondaryMap<GlobalVar, VarScope>,
    /// The addresses in each variable's initializer, by offset (empty for most variables).
    pub addr_inits: SecondaryMap<GlobalVar, Vec<AddrInit>>,
    pub functions: Vec<Function>,
    /// `.address_size 32` (or none given): addresses, `.global` variables' included, are 32
    /// bits, so [`eval`] places the module's `.global` variables below 4 GB.
    pub addr32: bool,
    /// The module's `.texref` variables in declaration order ([`tex::TexHandle::Bound`]
    /// indexes this list).
    pub texrefs: Vec<String>,
    /// Module-scope `.surfref` names, in declaration order
    /// ([`crate::surface::SurfHandle::Bound`] indexes this).
    pub surfrefs: Vec<String>,
    /// The module's `.samplerref` variables in declaration order
    /// ([`tex::TexHandle::Paired`] indexes this list; `.texmode_independent`).
    pub samplerrefs: Vec<crate::sampler::SamplerRef>,
    /// A function of the module has an `istypep` (the cubin then says so,
    /// `EIATTR_ISTYPEP_USED`).
    pub istypep_used: bool,
    /// The bodiless functions [`InstData::ExternCall`] names (by index), in first-call order.
    pub extern_funcs: Vec<String>,
    /// The `.func`s compiled as real subroutines ([`Function::subroutine`]; recursive ones),
    /// called by an [`InstData::ExternCall`] whose [`Module::extern_funcs`] name is theirs.
    pub subroutines: Vec<Function>,
    /// The kernels whose descriptors [`InstData::KernelDesc`] takes (by index), in first-use
    /// order.
    pub kernel_descs: Vec<String>,
    /// Under `--compile-only`: the `.visible .func`s compiled as functions of the object
    /// (other objects call them; `ir::build::build_object_functions`), built as subroutines
    /// are ([`Function::subroutine`]), in module order.
    pub object_functions: Vec<Function>,
    /// `.visible .func`s left out of the object, each with the reason (the driver warns).
    pub object_function_skips: Vec<(String, String)>,
    /// The [`Module::subroutines`] that are not recursive: large functions kept as
    /// subroutines by the size rule (`ir::build::calls::outlined_set`), sorted. Their stack
    /// use is bounded (no "cannot be statically determined" attributes).
    pub outlined: Vec<String>,
}

impl AddrInit {
    /// Write the initializer into `bytes` (the variable's bytes), for the target address
    /// `addr` (the addend not yet added). Bytes past the end are dropped.
    pub fn patch(&self, bytes: &mut [u8], addr: u64) {
        let v = addr.wrapping_add(self.addend as u64);
        let le = v.to_le_bytes();
        let (src, n) = match self.width {
            AddrWidth::Word(n) => (&le[..], usize::from(n.min(8))),
            AddrWidth::Byte(shift) => (&le[usize::from(shift.min(56) / 8)..], 1),
        };
        let at = self.offset as usize;
        for (k, &b) in src.iter().take(n).enumerate() {
            if let Some(d) = bytes.get_mut(at + k) {
                *d = b;
            }
        }
    }
}

impl Module {
    pub fn new() -> Module {
        Module::default()
    }

    /// The subroutine [`InstData::ExternCall`] `callee` names, if it is one of the module's
    /// own ([`Module::subroutines`]) rather than a function the loader or nvlink resolves.
    pub fn subroutine_of(&self, callee: u32) -> Option<&Function> {
        let name = self.extern_funcs.get(callee as usize)?;
        self.subroutines.iter().find(|f| &f.name == name)
    }

    /// The variables in layout order: declaration order, except that unsized `.shared`
    /// arrays (the dynamic shared memory, aligned to 16 by `build`) come after every other
    /// variable, so that they start past all static shared data, kernel-scope variables
    /// declared after them included. `eval`, `lower` and the driver lay out `.const` memory in
    /// this order; `.shared` and `.local` memory are per kernel ([`Module::shared_layout`],
    /// [`Module::local_layout`]), each in this order among the variables the kernel names.
    pub fn vars_in_layout_order(&self) -> impl Iterator<Item = (GlobalVar, &VarData)> {
        let dynamic = |v: &VarData| v.space == Space::Shared && v.size == 0;
        let sized = self.vars.iter().filter(move |(_, v)| !dynamic(v));
        sized.chain(self.vars.iter().filter(move |(_, v)| dynamic(v)))
    }

    /// The offset in constant bank 3 of every `.const` variable (and of the param- and
    /// generic-space ones, which share that region): [`Module::vars_in_layout_order`], each
    /// at its alignment, as `lower` reads them and `ir::eval` and the cubin lay them out.
    pub fn const_offsets(&self) -> Vec<(GlobalVar, u32)> {
        let mut end = 0u32;
        let mut out = Vec::new();
        for (gv, v) in self.vars_in_layout_order() {
            if let Space::Const | Space::Param | Space::Generic = v.space {
                let off = end.next_multiple_of(v.align.max(1));
                end = off.saturating_add(v.size);
                out.push((gv, off));
            }
        }
        out
    }

    pub fn add_var(&mut self, var: VarData) -> GlobalVar {
        self.vars.push(var)
    }

    /// The variables of `space` that `f`'s instructions name (`addr @var`), each once, in
    /// variable order: the ones a per-kernel layout gives storage.
    pub(super) fn named_in(&self, f: &Function, space: Space) -> Vec<GlobalVar> {
        let mut named: Vec<GlobalVar> = f
            .insts
            .values()
            .filter_map(|n| match n.data {
                InstData::SymbolAddr { var, .. } => Some(var),
                _ => None,
            })
            .filter(|&gv| self.vars.get(gv).is_some_and(|v| v.space == space))
            .collect();
        named.sort_unstable();
        named.dedup();
        named
    }

    /// The `.local` memory of kernel `f`: the byte offset of every `.local` variable the
    /// kernel names (its inlined callees' included), in layout order at its alignment, and
    /// the end of the last one. The variables start after the outgoing stack-argument area
    /// of its calls ([`outgoing_args_size`]), which the call ABI puts at `[R1+0]`. As ptxas does, a kernel reserves no per-thread memory for the
    /// local variables of other kernels, nor for ones it never names. `eval`, `lower` and the
    /// driver all use it, so the code, the frame size and the reference interpreter agree.
    pub fn local_layout(&self, f: &Function) -> (HashMap<GlobalVar, u32>, u32) {
        let named = self.named_in(f, Space::Local);
        let mut offsets = HashMap::default();
        let mut end = outgoing_args_size(f);
        for (gv, v) in self.vars_in_layout_order() {
            if named.binary_search(&gv).is_ok() {
                let off = end
                    .checked_next_multiple_of(v.align.max(1))
                    .unwrap_or(u32::MAX);
                offsets.insert(gv, off);
                end = off.saturating_add(v.size);
            }
        }
        (offsets, end)
    }

    /// The `.shared` variables that the module's subroutines ([`Module::subroutines`]) name,
    /// when `f` is one of them or calls one (else none). A subroutine is compiled once and
    /// runs in any kernel that calls it, so its variables sit at the start of the shared
    /// window, at the same offsets in each such kernel and in the subroutine itself (ptxas
    /// 11.8, probe `shr.ptx` in docs/calls.md: a recursive `f` naming `gbuf` and its own
    /// `buf` reads `[0x4]` and writes `[R3+0x40]`).
    fn subroutine_shared(&self, f: &Function) -> Vec<GlobalVar> {
        let calls_one = || {
            f.insts.values().any(|n| match n.data {
                InstData::ExternCall { callee, .. } => self.subroutine_of(callee).is_some(),
                _ => false,
            })
        };
        if self.subroutines.is_empty() || !(f.subroutine || calls_one()) {
            return Vec::new();
        }
        let mut vars: Vec<GlobalVar> = self
            .subroutines
            .iter()
            .flat_map(|s| self.named_in(s, Space::Shared))
            .collect();
        vars.sort_unstable();
        vars.dedup();
        vars
    }

    /// The `.shared` memory of kernel `f` (see [`SharedLayout`]); `eval`, `lower` and the
    /// driver all use it, so the code, the cubin's `.nv.shared.<kernel>` section and the
    /// reference interpreter agree.
    pub fn shared_layout(&self, f: &Function) -> SharedLayout {
        let is_dynamic = |v: &VarData| v.size == 0;
        let key = |&gv: &GlobalVar| (self.var_scopes[gv], gv);
        // The subroutines' variables first, the same offsets in every function that runs
        // them (`subroutine_shared`), then the function's own.
        let mut named = self.subroutine_shared(f);
        named.sort_by_key(key);
        let mut own: Vec<GlobalVar> = self
            .named_in(f, Space::Shared)
            .into_iter()
            .filter(|gv| !named.contains(gv))
            .collect();
        own.sort_by_key(key);
        named.extend(own);
        let any_dynamic = self
            .vars
            .values()
            .any(|v| v.space == Space::Shared && is_dynamic(v));
        let mut l = SharedLayout {
            align: 1,
            section: any_dynamic || !named.is_empty(),
            ..SharedLayout::default()
        };
        let mut end = 0u32;
        for &gv in &named {
            let v = &self.vars[gv];
            if is_dynamic(v) {
                continue;
            }
            let align = v.align.max(1);
            let off = end.checked_next_multiple_of(align).unwrap_or(u32::MAX);
            l.offsets.insert(gv, off);
            end = off.saturating_add(v.size);
            l.align = l.align.max(align);
        }
        if any_dynamic {
            let dyn_align = self
                .vars
                .values()
                .filter(|v| v.space == Space::Shared && is_dynamic(v))
                .fold(16, |a, v| a.max(v.align));
            l.align = l.align.max(dyn_align);
            end = end.checked_next_multiple_of(dyn_align).unwrap_or(u32::MAX);
        }
        l.size = end;
        for &gv in &named {
            if is_dynamic(&self.vars[gv]) {
                l.offsets.insert(gv, end);
            }
        }
        l
    }
}

/// Bytes of the outgoing stack-argument area `f`'s calls need (the sm_50 call ABI,
/// docs/calls.md): the end of the highest argument word an [`InstData::ExternCall`] passes at
/// [`STACK_ARG_REG`] or above, rounded up to 8 (0 when every argument fits in R4..R15).
/// ptxas puts the area at the bottom of the caller's frame, `[R1+0]` up, and the callee
/// reads it from its own R1 plus its frame.
pub fn outgoing_args_size(f: &Function) -> u32 {
    let mut end = 0u32;
    for (_, node) in f.insts.iter() {
        let InstData::ExternCall { args, arg_regs, .. } = &node.data else {
            continue;
        };
        let stack = stack_args_end(f, args, arg_regs);
        end = end.max(stack);
        if node.results.len() > MAX_RESULT_REGISTERS {
            // The result buffer after the stack arguments (`result_buffer_offset`).
            end = end.max(stack.next_multiple_of(8) + 4 * node.results.len() as u32);
        }
    }
    end.next_multiple_of(8)
}

/// The most result words a call returns in registers (R4..R15, 48 bytes); a call with more
/// (one `i32` result per word) returns them through a buffer in the caller's outgoing area
/// whose address it passes in R4 (docs/calls.md, "Large results").
pub const MAX_RESULT_REGISTERS: usize = 12;

/// The end of the stack arguments (`arg_regs` from [`STACK_ARG_REG`] up) of a call, in bytes
/// from the bottom of the caller's outgoing area.
fn stack_args_end(f: &Function, args: &[Value], arg_regs: &[u8]) -> u32 {
    let mut end = 0u32;
    for (&a, &r) in args.iter().zip(arg_regs) {
        if r >= STACK_ARG_REG {
            let words = if f.values[a].ty == Type::I64 { 2 } else { 1 };
            end = end.max(4 * (u32::from(r - STACK_ARG_REG) + words));
        }
    }
    end
}

/// Where a call's result buffer lies (a result of more than [`MAX_RESULT_REGISTERS`] words),
/// in bytes from the bottom of the caller's outgoing area (`[R1 + this]`): after its stack
/// arguments, 8-aligned; `stack_end` is the end of those (the callee knows it from its stack
/// parameters, the caller from its `arg_regs`). With none it is `[R1]`, where ptxas 11.8
/// puts it (`MOV R4, R1`).
pub fn result_buffer_offset(stack_end: u32) -> u32 {
    stack_end.next_multiple_of(8)
}

/// [`result_buffer_offset`] of a call's arguments (`arg_regs` as in
/// [`InstData::ExternCall`]).
pub fn call_result_buffer_offset(f: &Function, args: &[Value], arg_regs: &[u8]) -> u32 {
    result_buffer_offset(stack_args_end(f, args, arg_regs))
}
