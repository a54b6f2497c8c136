//! Numbers and constant expressions of the parser: integer and float literals (PTX's
//! `0f`/`0d` hex floats, suffixes), and the C-like constant expressions PTX allows where a
//! number goes (array sizes, initializers, offsets, immediates), folded as they are read.
//!
//! In: the token stream at a number or an expression. Out: its value (with its span), or a
//! diagnostic at the offending token. Invariant: nesting is bounded by the parser's depth
//! guard, so a deep expression is a diagnostic, never a stack overflow.

use super::*;

/// The precedence of a binary operator [`Parser::binary`] continues an expression with
/// (higher binds tighter); `None` for any other token.
pub(super) fn binary_precedence(t: Tok) -> Option<u8> {
    Some(match t {
        Tok::OrOr => 1,
        Tok::AndAnd => 2,
        Tok::Pipe => 3,
        Tok::Caret => 4,
        Tok::Amp => 5,
        Tok::EqEq | Tok::Ne => 6,
        Tok::Shl | Tok::Shr => 8,
        Tok::Plus | Tok::Minus => 9,
        Tok::Star | Tok::Slash | Tok::Percent => 10,
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    // ---- numbers and constant expressions ------------------------------------------------

    pub(super) fn int_value(&mut self, t: Token) -> PResult<Imm> {
        let text = self.text_of(t);
        // Plain decimal without a suffix, short enough not to overflow (most constants): the
        // value accumulated digit by digit, which is what the general path below computes.
        let b = text.as_bytes();
        if (1..=19).contains(&b.len())
            && (b[0] != b'0' || b.len() == 1)
            && b.iter().all(u8::is_ascii_digit)
        {
            let mut v = 0u64;
            for &d in b {
                v = v * 10 + u64::from(d - b'0');
            }
            return Ok(Imm::Int {
                value: v as i64,
                unsigned: false,
            });
        }
        let (body, unsigned) = match text.strip_suffix(['U', 'u']) {
            Some(b) => (b, true),
            None => (text, false),
        };
        let parsed = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            u64::from_str_radix(h, 16)
        } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
            u64::from_str_radix(b, 2)
        } else if body.len() > 1 && body.starts_with('0') {
            u64::from_str_radix(&body[1..], 8)
        } else {
            body.parse::<u64>()
        };
        match parsed {
            Ok(v) => Ok(Imm::Int {
                value: v as i64,
                unsigned,
            }),
            Err(e) => {
                let msg = if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
                    format!("integer constant '{text}' does not fit in 64 bits")
                } else {
                    format!("malformed integer constant '{text}'")
                };
                self.error(t.span, msg);
                Err(())
            }
        }
    }

    pub(super) fn float_bits(&mut self, t: Token) -> PResult<Imm> {
        let text = self.text_of(t);
        let digits = &text[2..];
        let (want, f32) = if t.kind == Tok::F32 {
            (8, true)
        } else {
            (16, false)
        };
        if digits.len() != want || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            self.error(
                t.span,
                format!(
                    "malformed float constant '{text}': expected {} followed by {want} hex digits",
                    &text[..2]
                ),
            );
            return Err(());
        }
        let v = u64::from_str_radix(digits, 16).map_err(|_| ())?;
        Ok(if f32 { Imm::F32(v as u32) } else { Imm::F64(v) })
    }

    /// A constant expression, folded. Integers use 64-bit wrapping arithmetic (as ptxas
    /// does); a float literal may only be negated.
    pub(super) fn expr(&mut self) -> PResult<(Imm, Span)> {
        self.enter()?;
        let t = self.tok();
        // A lone integer literal (most constants: immediates, offsets, `.loc` numbers): what
        // `binary` gives for it (no operator follows), without the descent through it.
        let r = if t.kind == Tok::Int && binary_precedence(self.peek_at(1)).is_none() {
            self.bump();
            self.int_value(t).map(|v| (v, t.span))
        } else {
            self.binary(0)
        };
        self.leave();
        r
    }

    pub(super) fn binary(&mut self, min_prec: u8) -> PResult<(Imm, Span)> {
        let mut lhs = self.unary()?;
        loop {
            let op = self.peek();
            let Some(prec) = binary_precedence(op) else {
                break;
            };
            if prec < min_prec {
                break;
            }
            let op_tok = self.bump();
            let rhs = self.binary(prec + 1)?;
            let span = lhs.1.to(rhs.1);
            let (
                Imm::Int {
                    value: a,
                    unsigned: ua,
                },
                Imm::Int {
                    value: b,
                    unsigned: ub,
                },
            ) = (lhs.0, rhs.0)
            else {
                self.error(span, "floating-point constant in an integer expression");
                return Err(());
            };
            let unsigned = ua || ub;
            let v = match op {
                Tok::OrOr => ((a != 0) || (b != 0)) as i64,
                Tok::AndAnd => ((a != 0) && (b != 0)) as i64,
                Tok::Pipe => a | b,
                Tok::Caret => a ^ b,
                Tok::Amp => a & b,
                Tok::EqEq => (a == b) as i64,
                Tok::Ne => (a != b) as i64,
                Tok::Shl => a.wrapping_shl(b as u32),
                Tok::Shr => {
                    if unsigned {
                        ((a as u64).wrapping_shr(b as u32)) as i64
                    } else {
                        a.wrapping_shr(b as u32)
                    }
                }
                Tok::Plus => a.wrapping_add(b),
                Tok::Minus => a.wrapping_sub(b),
                Tok::Star => a.wrapping_mul(b),
                Tok::Slash | Tok::Percent => {
                    if b == 0 {
                        self.error(
                            op_tok.span.to(rhs.1),
                            "division by zero in constant expression",
                        );
                        return Err(());
                    }
                    match (op, unsigned) {
                        (Tok::Slash, true) => ((a as u64) / (b as u64)) as i64,
                        (Tok::Slash, false) => a.wrapping_div(b),
                        (_, true) => ((a as u64) % (b as u64)) as i64,
                        (_, false) => a.wrapping_rem(b),
                    }
                }
                _ => unreachable!("operator list above"),
            };
            lhs = (Imm::Int { value: v, unsigned }, span);
        }
        Ok(lhs)
    }

    pub(super) fn unary(&mut self) -> PResult<(Imm, Span)> {
        let t = self.tok();
        match t.kind {
            Tok::Minus | Tok::Tilde | Tok::Bang | Tok::Plus => {
                self.bump();
                self.enter()?;
                let r = self.unary();
                self.leave();
                let (v, s) = r?;
                let span = t.span.to(s);
                let v = match (t.kind, v) {
                    (Tok::Plus, v) => v,
                    (Tok::Minus, Imm::Int { value, unsigned }) => Imm::Int {
                        value: value.wrapping_neg(),
                        unsigned,
                    },
                    (Tok::Minus, Imm::F32(b)) => Imm::F32(b ^ 0x8000_0000),
                    (Tok::Minus, Imm::F64(b)) => Imm::F64(b ^ (1 << 63)),
                    (Tok::Tilde, Imm::Int { value, unsigned }) => Imm::Int {
                        value: !value,
                        unsigned,
                    },
                    (Tok::Bang, Imm::Int { value, unsigned }) => Imm::Int {
                        value: (value == 0) as i64,
                        unsigned,
                    },
                    _ => {
                        self.error(span, "floating-point constant in an integer expression");
                        return Err(());
                    }
                };
                Ok((v, span))
            }
            Tok::LParen => {
                self.bump();
                let (v, _) = self.expr()?;
                let close = self.expect(Tok::RParen, "')'")?;
                Ok((v, t.span.to(close.span)))
            }
            Tok::Int => {
                self.bump();
                Ok((self.int_value(t)?, t.span))
            }
            Tok::F32 | Tok::F64 => {
                self.bump();
                Ok((self.float_bits(t)?, t.span))
            }
            Tok::Float => {
                self.bump();
                match self.text_of(t).parse::<f64>() {
                    Ok(v) => Ok((Imm::F64(v.to_bits()), t.span)),
                    Err(_) => {
                        let text = self.text_of(t);
                        self.error(t.span, format!("malformed float constant '{text}'"));
                        Err(())
                    }
                }
            }
            _ => self.expected("a constant"),
        }
    }

    pub(super) fn const_int(&mut self, what: &str) -> PResult<(i64, Span)> {
        let (v, span) = self.expr()?;
        match v {
            Imm::Int { value, .. } => Ok((value, span)),
            _ => {
                self.error(span, format!("expected an integer {what}"));
                Err(())
            }
        }
    }

    /// A constant integer expression that must be a count or size: `(value, span)`, an
    /// error (naming the value as written, 18446744073709551615 rather than -1) when it is
    /// negative or above `max`.
    pub(super) fn const_count(&mut self, what: &str, max: u64) -> PResult<(u64, Span)> {
        let (v, span) = self.expr()?;
        let (value, unsigned) = match v {
            Imm::Int { value, unsigned } => (value, unsigned),
            _ => {
                self.error(span, format!("expected an integer {what}"));
                return Err(());
            }
        };
        match u64::try_from(value) {
            Ok(n) if n <= max => Ok((n, span)),
            _ => {
                // A lone literal as written (a wrapped value reads as -1); else its value.
                let written = self
                    .file
                    .text
                    .get(span.start as usize..span.end as usize)
                    .unwrap_or("");
                let shown =
                    if !written.is_empty() && written.bytes().all(|c| c.is_ascii_alphanumeric()) {
                        written.to_string()
                    } else if unsigned {
                        (value as u64).to_string()
                    } else {
                        value.to_string()
                    };
                self.error(span, format!("{what} {shown} is out of range"));
                Err(())
            }
        }
    }

    pub(super) fn const_u32(&mut self, what: &str) -> PResult<(u32, Span)> {
        let (v, span) = self.const_count(what, u64::from(u32::MAX))?;
        Ok((v as u32, span))
    }
}
