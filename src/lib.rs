//! leafold: an offline PTX-to-SASS compiler for NVIDIA Maxwell (sm_50, sm_52, sm_53).
//!
//! Its speciality is address arithmetic: pointer arithmetic is folded into `LEA` /
//! `LEA.HI.X` chains with scale, negated offsets, constant-bank bases and the `Plg`
//! shared-window predicate that feeds generic loads and stores.
//!
//! The pipeline, one module per stage, each with one entry function:
//!
//! ```text
//! PTX text ──ptx::parse──▶ AST (spans) ──ptx::check──▶ checked AST ──ir::build──▶ SSA IR
//!   ──lower::lower_function──▶ VCode (SM50 forms, virtual registers)
//!   ──machinst::allocate (regalloc2)──▶ physical registers ──lower::emit──▶ sm50::Inst list
//!   ──sm50::sched::assign_control──▶ control codes ──sm50::sched::bundle::layout──▶ words
//!   ──cubin::write──▶ ELF cubin
//! ```
//!
//! [`compile`] (in [`driver`]) runs the whole chain. For reading machine code back:
//! `cubin::read` → `sm50::decode` → `sm50::print` ([`disasm`] lays it out like cuobjdump).
//! Two reference semantics make the compiler checkable without a Maxwell GPU: [`ir::eval`]
//! interprets the IR (what the PTX means) and [`sim`] executes SM50 words (what our SASS does);
//! `sm50::sched::check` verifies the control codes; [`verify`] compares the two on random
//! inputs (`leafold verify`). [`oracle`] finds NVIDIA's tools for tests.
//!
//! Every error a user can cause is a [`error::Diagnostic`] with file, line and column, or a
//! typed error for binary input; nothing panics on input.

pub mod cli;
pub mod cubin;
pub mod disasm;
pub mod driver;
pub mod error;
pub mod heap;
pub mod ir;
pub mod lower;
pub mod machinst;
pub mod mufu;
pub mod occupancy;
pub mod oracle;
pub mod ptx;
pub mod ptxgen;
pub mod sampler;
pub mod sim;
pub mod sm50;
pub mod surface;
pub mod sysfn;
pub mod tex_table;
pub mod texture;
pub mod verify;

pub use driver::{compile, Options, Output};
pub use error::{Diagnostic, Diagnostics, SourceFile, Span};
