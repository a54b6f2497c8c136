//! The SM50 instruction set as data, and the generator that turns it into Rust.
//!
//! Placeholder until the ISA description lands: `generate` writes an empty module.

/// Generate the Rust source for encode/decode/print/operand visiting.
pub fn generate() -> String {
    String::new()
}
