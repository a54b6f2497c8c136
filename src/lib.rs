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
//!   ──lower──▶ VCode (SM50 forms, virtual registers) ──regalloc2──▶ allocated VCode
//!   ──sm50::sched──▶ control codes ──sm50::bundle──▶ bytes ──cubin::write──▶ ELF cubin
//! ```
//!
//! and, for reading machine code back, `cubin::read` → `sm50::decode` → `sm50::print`.
//!
//! What exists today: the PTX front end ([`ptx`]), the SM50 instruction set as data
//! ([`sm50`], generated from `isa/`), and cubin reading/writing ([`cubin`]). Every error a user
//! can cause is a [`error::Diagnostic`] with file, line and column; nothing panics on input.

pub mod cli;
pub mod cubin;
pub mod disasm;
pub mod driver;
pub mod error;
pub mod ir;
pub mod lower;
pub mod machinst;
pub mod oracle;
pub mod ptx;
pub mod sim;
pub mod sm50;

pub use driver::{compile, Options, Output};
pub use error::{Diagnostic, Diagnostics, SourceFile, Span};
