//! What the driver reads from the AST besides the IR: each kernel's span, visibility and
//! launch directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`), and the register
//! budget they give.
//!
//! In: the checked AST module. Out: [`AstFacts`] per kernel name.

use super::*;

/// The span of a kernel's name in the source (for stage errors), or the file start.
pub(super) fn kernel_span(ast: &ast::Module, name: &str) -> Span {
    ast.functions()
        .find(|f| f.name.text == name)
        .map_or(Span::new(0, 0), |f| f.name.span)
}

/// What compiling needs from the AST once the IR is built (so that the AST can go).
pub(super) struct AstFacts {
    /// Per function name: its name's span and whether it is `.visible`.
    pub(super) functions: rustc_hash::FxHashMap<String, (Span, bool)>,
    /// Per kernel name: its performance-tuning directives, where it has any.
    pub(super) launch: rustc_hash::FxHashMap<String, LaunchDirectives>,
    pub(super) ptx_target: Option<u32>,
    pub(super) address_bits: u32,
    pub(super) texmode_independent: bool,
    /// Module variables declared `.visible` (GLOBAL symbols of a relocatable object).
    pub(super) visible_vars: Vec<String>,
}

/// A kernel's performance-tuning directives (PTX ISA 11.4) as far as code generation and the
/// cubin use them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LaunchDirectives {
    pub(super) maxntid: Option<[u32; 3]>,
    pub(super) reqntid: Option<[u32; 3]>,
    pub(super) maxnreg: Option<u32>,
    pub(super) minnctapersm: Option<u32>,
}

/// A kernel's register budget ([`LaunchDirectives::register_budget`]).
pub(super) struct Budget {
    pub(super) regs: u32,
    /// ptxas's warnings about the directives.
    pub(super) warnings: Vec<String>,
    /// Where the budget is an entry-specific value (`.maxnreg`, or `.minnctapersm` with a
    /// block size), the words `-v` says it came from.
    pub(super) entry: Option<&'static str>,
}

impl Budget {
    /// ptxas's `-v` line where the entry-specific value differs from `--maxrregcount`
    /// (`cli`: as given, `None` without it; ptxas reports a value above 255 as 255 and one
    /// below 16 as 16).
    pub(super) fn override_line(&self, cli: Option<u32>) -> Option<String> {
        let global = cli?.clamp(MIN_REGISTER_BUDGET, 255);
        let from = self.entry?;
        (global != self.regs).then(|| {
            format!(
                "ptxas info    : Overriding global maxrregcount {global} with entry-specific \
                 value {} {from}",
                self.regs
            )
        })
    }
}

/// The fewest registers ptxas 11.8 lets a kernel have: it raises a smaller `.maxnreg` to this,
/// with a warning.
pub(super) const MIN_REGISTER_BUDGET: u32 = 16;

impl AstFacts {
    pub(super) fn of(ast: &ast::Module) -> AstFacts {
        let mut functions = rustc_hash::FxHashMap::default();
        let mut launch = rustc_hash::FxHashMap::default();
        for f in ast.functions() {
            functions
                .entry(f.name.text.to_string())
                .or_insert((f.name.span, f.linkage.contains(&ast::Linkage::Visible)));
            if !f.perf.is_empty() {
                launch.insert(f.name.text.to_string(), LaunchDirectives::of(&f.perf));
            }
        }
        AstFacts {
            functions,
            launch,
            ptx_target: ptx_target(ast),
            address_bits: ast.address_size(),
            texmode_independent: ast.targets().contains(&"texmode_independent"),
            visible_vars: ast
                .items
                .iter()
                .filter_map(|i| match i {
                    ast::Item::Var(v) if v.linkage.contains(&ast::Linkage::Visible) => Some(v),
                    _ => None,
                })
                .flat_map(|v| v.names.iter().map(|d| d.name.text.to_string()))
                .collect(),
        }
    }

    /// Where kernel `name` is named (the file start if it is not a function of the file).
    pub(super) fn span(&self, name: &str) -> Span {
        self.functions.get(name).map_or(Span::new(0, 0), |f| f.0)
    }

    /// Whether `name` is `.visible` (a name the file does not define counts as visible).
    pub(super) fn visible(&self, name: &str) -> bool {
        self.functions.get(name).map_or(true, |f| f.1)
    }
}

impl LaunchDirectives {
    pub(super) fn of(perf: &[ast::PerfDirective]) -> LaunchDirectives {
        let dims = |v: &[u32]| {
            let d = |k: usize| v.get(k).copied().unwrap_or(1);
            [d(0), d(1), d(2)]
        };
        let mut l = LaunchDirectives::default();
        for p in perf {
            match p {
                ast::PerfDirective::MaxNtid(v, _) => l.maxntid = Some(dims(v)),
                ast::PerfDirective::ReqNtid(v, _) => l.reqntid = Some(dims(v)),
                ast::PerfDirective::MaxNreg(n, _) => l.maxnreg = Some(*n),
                ast::PerfDirective::MinNctaPerSm(n, _) => l.minnctapersm = Some(*n),
                ast::PerfDirective::MaxNctaPerSm(..) | ast::PerfDirective::Pragma(..) => {}
            }
        }
        l
    }

    /// Threads per block the directives fix or bound.
    pub(super) fn block(&self) -> Option<u32> {
        self.reqntid
            .or(self.maxntid)
            .map(|d| d.iter().map(|&x| x.max(1)).fold(1u32, u32::saturating_mul))
    }

    /// The register budget, ptxas's warnings about the directives, and where the budget is
    /// an entry-specific value that overrides `--maxrregcount`, what it was computed from.
    ///
    /// As ptxas 11.8 does (measured on its `EIATTR_MAXREG_COUNT` and its `-v` lines): the
    /// entry-specific value is `.maxnreg` (raised to 16 when below, 255 when above, each with a
    /// warning) and, where a block-size directive comes with a `.minnctapersm` that can be met,
    /// the most registers with which that many blocks of that size are still resident on one
    /// SM (computed using thread count); with both, the smaller. Without either, a block-size
    /// directive alone gives the most registers with which one such block is resident, and
    /// `--maxrregcount` is ignored; otherwise `--maxrregcount` (255 without it). A
    /// `.minnctapersm` that no block size could meet (more warps than an SM holds) is ignored,
    /// with a warning.
    pub(super) fn register_budget(&self, arch: Arch, name: &str, cli: u32) -> Budget {
        let mut warnings = Vec::new();
        let maxnreg = self.maxnreg.map(|n| {
            if n > 255 {
                warnings.push(format!(
                    "too many maxnreg specified for entry {name}, will be ignored"
                ));
                255
            } else if n < MIN_REGISTER_BUDGET {
                warnings.push(format!(
                    "for entry {name} adjusting per thread register count of {n} to lower \
                     bound of {MIN_REGISTER_BUDGET}"
                ));
                MIN_REGISTER_BUDGET
            } else {
                n
            }
        });
        // (the budget of the block size, whether `.minnctapersm` counted in it)
        let threads = self.block().map(|block| {
            let block = block.min(1024);
            let warps = block.div_ceil(32);
            let mut blocks = self.minnctapersm.unwrap_or(1).max(1);
            let mut counted = self.minnctapersm.is_some();
            if blocks.saturating_mul(warps) > crate::occupancy::WARPS_PER_SM
                || blocks > crate::occupancy::BLOCKS_PER_SM
            {
                warnings.push(format!(
                    "value of threads per SM for entry {name} is out of range; .minnctapersm \
                     will be ignored"
                ));
                blocks = 1;
                counted = false;
            }
            let fits =
                |r: u32| crate::occupancy::theoretical(arch, r, 0, Some(block)).blocks >= blocks;
            let budget = (MIN_REGISTER_BUDGET..=255)
                .rev()
                .find(|&r| fits(r))
                .unwrap_or(MIN_REGISTER_BUDGET);
            (budget, counted)
        });
        let counted = threads.filter(|t| t.1).map(|t| t.0);
        const THREADS: &str = "computed using thread count";
        let (regs, entry) = match (maxnreg, counted) {
            (Some(m), Some(t)) if t < m => (t, Some(THREADS)),
            // (ptxas names no source then: "... entry-specific value 32 ")
            (Some(m), Some(t)) if t == m => (m, Some("")),
            (Some(m), _) => (m, Some("of .maxnreg")),
            (None, Some(t)) => (t, Some(THREADS)),
            (None, None) => (threads.map_or(cli, |t| t.0), None),
        };
        Budget {
            regs,
            warnings,
            entry,
        }
    }

    /// The `.nv.info` records ptxas writes for them: `EIATTR_MAX_THREADS` for `.maxntid`,
    /// `EIATTR_REQNTID` for `.reqntid` (the driver refuses a launch beyond either).
    pub(super) fn records(&self) -> Vec<cubin::eiattr::Attribute> {
        let rec = |code: u8, d: [u32; 3]| cubin::eiattr::Attribute::Other {
            format: cubin::eiattr::Format::Sval,
            code,
            payload: d.iter().flat_map(|x| x.to_le_bytes()).collect(),
        };
        let mut v = Vec::new();
        if let Some(d) = self.maxntid {
            v.push(rec(cubin::eiattr::code::MAX_THREADS, d));
        }
        if let Some(d) = self.reqntid {
            v.push(rec(cubin::eiattr::code::REQNTID, d));
        }
        v
    }
}
