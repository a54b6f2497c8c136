//! The PTX front end: PTX text in, a checked AST with spans out.
//!
//! ```text
//! bytes ──SourceFile::from_bytes──▶ text ──lexer::lex──▶ tokens ──parser──▶ ast::Module
//!       ──check──▶ diagnostics (errors and warnings)
//! ```
//!
//! - [`lexer`]: byte-level, allocation-free tokens (kind + span).
//! - [`parser`]: recursive descent with bounded depth and statement-level error recovery;
//!   constant expressions folded.
//! - [`opcodes`]: the opcode table (modifiers allowed, operand counts, typing rule per opcode).
//! - [`alias`]: `.alias` resolved away (calls of an alias become calls of its aliasee).
//! - [`check`]: names declared once and before use, operand types per the PTX relaxed
//!   type-checking rules, state spaces, alignment, initializers, target.
//! - [`print`]: `Display` for the AST (PTX text that reparses to the same AST) and
//!   [`dump_ast`] for `leafold check --dump-ast`.
//!
//! Invariant for every entry point: any input bytes produce diagnostics, never a panic or a
//! hang, in time linear in the input.

pub mod alias;
pub mod ast;
pub mod check;
pub mod lexer;
pub mod opcodes;
pub mod parser;
pub mod print;

pub use check::check;
pub use opcodes::Opcode;
pub use parser::parse;
pub use print::dump_ast;

use crate::error::{Diagnostic, Diagnostics, SourceFile};
use std::sync::Arc;

/// Parse and check one file. `Ok` carries the module and its warnings; `Err` carries every
/// diagnostic (errors and warnings) when there is at least one error.
pub fn parse_and_check(
    file: &Arc<SourceFile>,
) -> Result<(ast::Module, Vec<Diagnostic>), Diagnostics> {
    let (module, mut diags) = parse(file);
    let Some(mut module) = module else {
        return Err(Diagnostics(diags));
    };
    // Checking a module that failed to parse would mostly repeat the parse errors as
    // "undeclared" noise, so only a cleanly parsed module is checked.
    if diags.iter().any(|d| d.is_error()) {
        return Err(Diagnostics(diags));
    }
    diags.extend(alias::resolve_aliases(&mut module, file));
    if diags.iter().any(|d| d.is_error()) {
        return Err(Diagnostics(diags));
    }
    diags.extend(check(&module, file));
    if diags.iter().any(|d| d.is_error()) {
        Err(Diagnostics(diags))
    } else {
        Ok((module, diags))
    }
}
