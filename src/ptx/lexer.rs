//! The PTX lexer: bytes in, a flat vector of tokens out.
//!
//! In: the text of a [`SourceFile`]. Out: [`Token`]s (a kind plus a byte span; the text of a
//! token is a slice of the source, so lexing allocates nothing per token) and diagnostics for
//! characters that cannot start a token or for unterminated comments and strings.
//!
//! Invariants: one pass, byte at a time, no backtracking, so lexing is linear in the input;
//! the token list always ends with one `Eof` token; an unexpected character produces one
//! diagnostic and is skipped, so the parser never sees garbage. Token shapes: identifiers
//! (`[A-Za-z_$%][A-Za-z0-9_$]*`), dot-words (`.` followed by a word that may start with a digit
//! and contain `::`, e.g. `.u32`, `.2d`, `.L2::128B`), numbers, strings and punctuation.

use crate::error::{Diagnostic, SourceFile, Span};
use std::sync::Arc;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident,
    /// `.word`; the span includes the dot.
    Dot,
    /// Decimal, hex (`0x`), octal (leading `0`) or binary (`0b`) integer, maybe `U` suffixed.
    Int,
    /// `0f` + 8 hex digits.
    F32,
    /// `0d` + 16 hex digits.
    F64,
    /// A decimal floating point literal (`1.5`, `2e10`).
    Float,
    Str,
    Comma,
    Semi,
    Colon,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Plus,
    Minus,
    Bang,
    At,
    Eq,
    Lt,
    Gt,
    Star,
    Slash,
    Percent,
    Tilde,
    Amp,
    Pipe,
    Caret,
    Question,
    Shl,
    Shr,
    AndAnd,
    OrOr,
    EqEq,
    Ne,
    Le,
    Ge,
    Eof,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub span: Span,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%'
}

fn is_ident_char(b: u8) -> bool {
    IDENT_CHAR[b as usize]
}

/// [`is_ident_char`] of every byte, as a table (the lexer asks it of nearly every byte of
/// the input).
static IDENT_CHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        b += 1;
    }
    t
};

/// Lex a whole file.
// Long by design: one loop over the bytes whose match has one arm per token class.
pub fn lex(file: &Arc<SourceFile>, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let s = file.text.as_bytes();
    let n = s.len();
    // A rough guess (one token per 4 bytes) avoids most regrowth without over-allocating.
    let mut toks = Vec::with_capacity(n / 4 + 1);
    let mut i = 0;
    while i < n {
        let b = s[i];
        let start = i;
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'/' if i + 1 < n && s[i + 1] == b'/' => {
                while i < n && s[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if i + 1 < n && s[i + 1] == b'*' => {
                i += 2;
                loop {
                    if i + 1 >= n {
                        diags.push(Diagnostic::error(
                            file,
                            Span::new(start, start + 2),
                            "unterminated block comment",
                        ));
                        i = n;
                        break;
                    }
                    if s[i] == b'*' && s[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            b'%' if i + 1 < n && is_ident_char(s[i + 1]) => {
                i += 1;
                while i < n && is_ident_char(s[i]) {
                    i += 1;
                }
                toks.push(tok(Tok::Ident, start, i));
                continue;
            }
            _ if is_ident_start(b) && b != b'%' => {
                i += 1;
                while i < n && is_ident_char(s[i]) {
                    i += 1;
                }
                toks.push(tok(Tok::Ident, start, i));
                continue;
            }
            // `.05` (a float with no integer part, as in `{.05, .1}`): digits not followed by
            // a letter. `.2d` and `.1d` stay modifiers.
            b'.' if i + 1 < n && s[i + 1].is_ascii_digit() && dot_float_len(&s[i..]).is_some() => {
                i += dot_float_len(&s[i..]).unwrap_or(1);
                toks.push(tok(Tok::Float, start, i));
                continue;
            }
            b'.' if i + 1 < n && is_ident_char(s[i + 1]) => {
                i += 1;
                loop {
                    while i < n && is_ident_char(s[i]) {
                        i += 1;
                    }
                    // `.L2::128B`, `.shared::cta`: `::` joins words inside one modifier.
                    if i + 2 < n && s[i] == b':' && s[i + 1] == b':' && is_ident_char(s[i + 2]) {
                        i += 2;
                        continue;
                    }
                    break;
                }
                toks.push(tok(Tok::Dot, start, i));
                continue;
            }
            b'0'..=b'9' => {
                let kind;
                if b == b'0' && i + 1 < n && matches!(s[i + 1], b'f' | b'F' | b'd' | b'D') {
                    kind = if matches!(s[i + 1], b'f' | b'F') {
                        Tok::F32
                    } else {
                        Tok::F64
                    };
                    i += 2;
                    while i < n && s[i].is_ascii_hexdigit() {
                        i += 1;
                    }
                } else if b == b'0' && i + 1 < n && matches!(s[i + 1], b'x' | b'X') {
                    kind = Tok::Int;
                    i += 2;
                    while i < n && s[i].is_ascii_hexdigit() {
                        i += 1;
                    }
                } else if b == b'0' && i + 1 < n && matches!(s[i + 1], b'b' | b'B') {
                    kind = Tok::Int;
                    i += 2;
                    while i < n && (s[i] == b'0' || s[i] == b'1') {
                        i += 1;
                    }
                } else {
                    while i < n && s[i].is_ascii_digit() {
                        i += 1;
                    }
                    let mut float = false;
                    if i < n && s[i] == b'.' && (i + 1 >= n || !is_ident_start(s[i + 1])) {
                        float = true;
                        i += 1;
                        while i < n && s[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                    if i < n
                        && matches!(s[i], b'e' | b'E')
                        && (i + 1 < n
                            && (s[i + 1].is_ascii_digit()
                                || (matches!(s[i + 1], b'+' | b'-')
                                    && i + 2 < n
                                    && s[i + 2].is_ascii_digit())))
                    {
                        float = true;
                        i += 2;
                        while i < n && s[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                    kind = if float { Tok::Float } else { Tok::Int };
                }
                if kind == Tok::Int && i < n && matches!(s[i], b'U' | b'u') {
                    i += 1;
                }
                // A number glued to letters (`12abc`) is one bad token, reported by the parser
                // when it fails to convert it.
                while i < n && is_ident_char(s[i]) {
                    i += 1;
                }
                toks.push(tok(kind, start, i));
                continue;
            }
            b'"' => {
                i += 1;
                let mut closed = false;
                while i < n {
                    match s[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            closed = true;
                            break;
                        }
                        b'\n' => break,
                        _ => i += 1,
                    }
                }
                let i2 = i.min(n);
                i = i2;
                if !closed {
                    diags.push(Diagnostic::error(
                        file,
                        Span::new(start, i),
                        "unterminated string literal",
                    ));
                }
                toks.push(tok(Tok::Str, start, i));
                continue;
            }
            _ => {}
        }
        let two = if i + 1 < n { s[i + 1] } else { 0 };
        let (kind, len) = match (b, two) {
            (b'<', b'<') => (Tok::Shl, 2),
            (b'>', b'>') => (Tok::Shr, 2),
            (b'&', b'&') => (Tok::AndAnd, 2),
            (b'|', b'|') => (Tok::OrOr, 2),
            (b'=', b'=') => (Tok::EqEq, 2),
            (b'!', b'=') => (Tok::Ne, 2),
            (b'<', b'=') => (Tok::Le, 2),
            (b'>', b'=') => (Tok::Ge, 2),
            (b',', _) => (Tok::Comma, 1),
            (b';', _) => (Tok::Semi, 1),
            (b':', _) => (Tok::Colon, 1),
            (b'{', _) => (Tok::LBrace, 1),
            (b'}', _) => (Tok::RBrace, 1),
            (b'[', _) => (Tok::LBracket, 1),
            (b']', _) => (Tok::RBracket, 1),
            (b'(', _) => (Tok::LParen, 1),
            (b')', _) => (Tok::RParen, 1),
            (b'+', _) => (Tok::Plus, 1),
            (b'-', _) => (Tok::Minus, 1),
            (b'!', _) => (Tok::Bang, 1),
            (b'@', _) => (Tok::At, 1),
            (b'=', _) => (Tok::Eq, 1),
            (b'<', _) => (Tok::Lt, 1),
            (b'>', _) => (Tok::Gt, 1),
            (b'*', _) => (Tok::Star, 1),
            (b'/', _) => (Tok::Slash, 1),
            (b'%', _) => (Tok::Percent, 1),
            (b'~', _) => (Tok::Tilde, 1),
            (b'&', _) => (Tok::Amp, 1),
            (b'|', _) => (Tok::Pipe, 1),
            (b'^', _) => (Tok::Caret, 1),
            (b'?', _) => (Tok::Question, 1),
            _ => {
                // Skip the whole (possibly multi-byte) character.
                let ch = file.text[i..].chars().next().unwrap_or('\u{fffd}');
                let len = ch.len_utf8().max(1);
                diags.push(Diagnostic::error(
                    file,
                    Span::new(i, i + len),
                    format!("unexpected character '{}'", ch.escape_default()),
                ));
                i += len;
                continue;
            }
        };
        toks.push(tok(kind, i, i + len));
        i += len;
    }
    toks.push(tok(Tok::Eof, n, n));
    toks
}

/// Length of a `.digits[e[+-]digits]` float at the start of `s`, if it is one (not followed by
/// a letter, digit or `_`).
fn dot_float_len(s: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    if i < s.len() && matches!(s[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < s.len() && matches!(s[j], b'+' | b'-') {
            j += 1;
        }
        if j < s.len() && s[j].is_ascii_digit() {
            while j < s.len() && s[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    if i < s.len() && is_ident_char(s[i]) {
        None
    } else {
        Some(i)
    }
}

fn tok(kind: Tok, start: usize, end: usize) -> Token {
    Token {
        kind,
        span: Span::new(start, end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Tok, String)> {
        let f = SourceFile::new("t.ptx", src);
        let mut d = vec![];
        lex(&f, &mut d)
            .into_iter()
            .map(|t| {
                (
                    t.kind,
                    f.text[t.span.start as usize..t.span.end as usize].to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn words_dots_numbers() {
        let k = kinds("ld.global.L2::128B.v4.f32 {%r1}, [a+-4]; 0f3F800000 0d3FF0000000000000 1.5 0x1FU 017 0b101 .2d");
        let texts: Vec<_> = k.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "ld",
                ".global",
                ".L2::128B",
                ".v4",
                ".f32",
                "{",
                "%r1",
                "}",
                ",",
                "[",
                "a",
                "+",
                "-",
                "4",
                "]",
                ";",
                "0f3F800000",
                "0d3FF0000000000000",
                "1.5",
                "0x1FU",
                "017",
                "0b101",
                ".2d",
                ""
            ]
        );
        assert_eq!(k[16].0, Tok::F32);
        assert_eq!(k[17].0, Tok::F64);
        assert_eq!(k[18].0, Tok::Float);
    }

    #[test]
    fn comments_and_bad_characters() {
        let f = SourceFile::new("t.ptx", "a // x\n/* y\n */ b # c /* open");
        let mut d = vec![];
        let t = lex(&f, &mut d);
        assert_eq!(t.len(), 4); // a b c eof
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].message, "unexpected character '#'");
        assert_eq!(d[1].message, "unterminated block comment");
    }
}
