//! The PTX parser: tokens in, an [`ast::Module`] out.
//!
//! In: the token vector from [`lexer::lex`]. Out: a module plus diagnostics. Recursive descent
//! over a flat token vector with one-token lookahead (two for labels). Constant expressions
//! are folded here, so the AST holds values, not expression trees. Names are interned as
//! they are parsed: each distinct text gets the next id ([`Name::id`]), an entry of the
//! module's [`NameTable`] and one [`NameText`] that every name with that text shares.
//!
//! Invariants: every loop consumes at least one token per iteration or stops at `Eof`, so the
//! parser always terminates in time linear in the number of tokens; recursion (nested blocks,
//! initializers, parenthesised expressions, `!` prefixes) is bounded by [`MAX_DEPTH`] and
//! reported as an error past it, so hostile input cannot overflow the stack. After an error
//! the parser skips to the next `;` (or the end of the enclosing block) and goes on, so one
//! file reports several errors.

use crate::error::{Diagnostic, SourceFile, Span};
use crate::ptx::ast::*;
use crate::ptx::lexer::{lex, Tok, Token};
use crate::ptx::opcodes::{OpInfo, Opcode, Rule};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Deepest nesting of blocks, initializers or expressions accepted.
pub const MAX_DEPTH: u32 = 128;

type PResult<T> = Result<T, ()>;

/// Parse a file. Returns `None` only when nothing usable was found (a file with only errors).
pub fn parse(file: &Arc<SourceFile>) -> (Option<Module>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let toks = lex(file, &mut diags);
    let mut p = Parser {
        file,
        src: &file.text,
        toks,
        pos: 0,
        diags: &mut diags,
        depth: 0,
        fatal: false,
        stmts: Vec::new(),
        ids: HashMap::default(),
        numbered: Vec::new(),
        special: Vec::new(),
        texts: Vec::new(),
        last_prefix: None,
    };
    // About one distinct name per 32 tokens in compiler output: room up front rather than
    // rehashing the table as the file's names are first seen (capacity only).
    p.ids.reserve(p.toks.len() / 32);
    let module = p.module();
    let usable = !module.items.is_empty() || p.diags.iter().all(|d| !d.is_error());
    (usable.then_some(module), diags)
}

struct Parser<'a> {
    file: &'a Arc<SourceFile>,
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    diags: &'a mut Vec<Diagnostic>,
    depth: u32,
    /// Set after an error that ends parsing (too deep nesting): no follow-on errors.
    fatal: bool,
    /// The statements of the blocks being parsed, innermost block's last: each block moves
    /// its own out at their exact count when it closes (instead of growing a vector of
    /// large statements by doubling and shrinking it to fit).
    stmts: Vec<Statement>,
    /// Each distinct name text seen so far and its id ([`Name::id`]).
    ids: HashMap<&'a str, u32>,
    /// By id: the module's [`NameTable::numbered`].
    numbered: Vec<Option<(u32, u32)>>,
    /// By id: whether the name is a special register ([`is_special_register`] of its text,
    /// asked once per distinct name instead of at every operand).
    special: Vec<bool>,
    /// By id: the text every [`Name`] with this id shares.
    texts: Vec<NameText>,
    /// The prefix [`Parser::intern_new`] last split off a numbered name, and its id.
    last_prefix: Option<(&'a str, u32)>,
}

/// The most tokens [`Parser::glued_dots`] and [`Parser::operands_ahead`] look ahead.
const LOOKAHEAD: usize = 48;

const SPACE_WORDS: &[&str] = &[
    ".reg", ".sreg", ".const", ".global", ".local", ".param", ".shared", ".tex",
];

impl<'a> Parser<'a> {
    // ---- token helpers -------------------------------------------------------------------

    fn peek(&self) -> Tok {
        self.toks[self.pos].kind
    }

    fn peek_at(&self, k: usize) -> Tok {
        self.toks[(self.pos + k).min(self.toks.len() - 1)].kind
    }

    fn tok(&self) -> Token {
        self.toks[self.pos]
    }

    fn text_of(&self, t: Token) -> &'a str {
        &self.src[t.span.start as usize..t.span.end as usize]
    }

    fn text(&self) -> &'a str {
        self.text_of(self.tok())
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos];
        if t.kind != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, k: Tok) -> bool {
        if self.peek() == k {
            self.bump();
            true
        } else {
            false
        }
    }

    fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].span.end
        }
    }

    fn is_dot(&self, word: &str) -> bool {
        self.peek() == Tok::Dot && self.text() == word
    }

    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(self.file, span, msg));
    }

    /// Report "expected X, found Y" at the current token. Out of line (an error path), so
    /// that [`Parser::expect`] and [`Parser::name`] stay small.
    #[cold]
    #[inline(never)]
    fn expected<T>(&mut self, what: &str) -> PResult<T> {
        let t = self.tok();
        let found = if t.kind == Tok::Eof {
            "end of file".to_string()
        } else {
            format!("'{}'", self.text_of(t))
        };
        self.error(t.span, format!("expected {what}, found {found}"));
        Err(())
    }

    fn expect(&mut self, k: Tok, what: &str) -> PResult<Token> {
        if self.peek() == k {
            Ok(self.bump())
        } else {
            self.expected(what)
        }
    }

    fn name(&mut self, what: &str) -> PResult<Name> {
        if self.peek() == Tok::Ident {
            let t = self.bump();
            let text = self.text_of(t);
            let id = self.intern(text);
            Ok(Name {
                text: self.texts[id as usize].clone(),
                span: t.span,
                id,
            })
        } else {
            self.expected(what)
        }
    }

    /// The id of a name text: the next free one the first time the text is seen (when its
    /// [`NameTable::numbered`] entry is made, interning the prefix of a numbered name too).
    fn intern(&mut self, text: &'a str) -> u32 {
        match self.ids.get(text) {
            Some(&id) => id,
            None => self.intern_new(text),
        }
    }

    /// [`Parser::intern`] of a text not seen before, out of line: the lookup that finds a
    /// name seen before (most of them) stays small enough to inline where names are parsed.
    #[cold]
    #[inline(never)]
    fn intern_new(&mut self, text: &'a str) -> u32 {
        let id = self.numbered.len() as u32;
        self.ids.insert(text, id);
        self.numbered.push(None);
        self.special.push(is_special_register(text));
        self.texts.push(NameText::new(text));
        // A prefix has no trailing digits, so it does not split again: no deeper recursion.
        if let Some((prefix, n)) = crate::ptx::check::split_numbered(text) {
            // New numbered names mostly come in runs of one prefix (`%r1`, `%r2`, ...): the
            // last prefix's id is kept, so the run hashes its prefix once.
            let p = match self.last_prefix {
                Some((last, p)) if last == prefix => p,
                _ => {
                    let p = self.intern(prefix);
                    self.last_prefix = Some((prefix, p));
                    p
                }
            };
            self.numbered[id as usize] = Some((p, n));
        }
        id
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.too_deep();
        }
        Ok(())
    }

    /// [`Parser::enter`] past [`MAX_DEPTH`], out of line so that the check itself (made for
    /// every operand) inlines.
    #[cold]
    #[inline(never)]
    fn too_deep(&mut self) -> PResult<()> {
        let span = self.tok().span;
        self.error(
            span,
            format!("nesting too deep (more than {MAX_DEPTH} levels)"),
        );
        // Give up on the rest of the file: recovering inside a pathological nest would
        // only produce follow-on noise.
        self.pos = self.toks.len() - 1;
        self.fatal = true;
        self.depth -= 1;
        Err(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---- recovery ------------------------------------------------------------------------

    /// Skip to just after the next `;` at this nesting level, or to a `}` closing the
    /// enclosing block (not consumed).
    fn recover_stmt(&mut self) {
        let mut depth = 0u32;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// At module level: skip to after a `;` or a balanced `}`, or to the next directive that
    /// can start an item.
    fn recover_top(&mut self) {
        let mut depth = 0u32;
        let mut moved = false;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    self.bump();
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                    continue;
                }
                Tok::Dot if depth == 0 && moved && is_item_start(self.text()) => return,
                _ => {}
            }
            self.bump();
            moved = true;
        }
    }

    // ---- numbers and constant expressions ------------------------------------------------

    fn int_value(&mut self, t: Token) -> PResult<Imm> {
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

    fn float_bits(&mut self, t: Token) -> PResult<Imm> {
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
    fn expr(&mut self) -> PResult<(Imm, Span)> {
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

    fn binary(&mut self, min_prec: u8) -> PResult<(Imm, Span)> {
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

    fn unary(&mut self) -> PResult<(Imm, Span)> {
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

    fn const_int(&mut self, what: &str) -> PResult<(i64, Span)> {
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
    fn const_count(&mut self, what: &str, max: u64) -> PResult<(u64, Span)> {
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

    fn const_u32(&mut self, what: &str) -> PResult<(u32, Span)> {
        let (v, span) = self.const_count(what, u64::from(u32::MAX))?;
        Ok((v as u32, span))
    }

    // ---- module --------------------------------------------------------------------------

    fn module(&mut self) -> Module {
        let mut items = Vec::new();
        while self.peek() != Tok::Eof {
            let before = self.pos;
            match self.item() {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {}
                Err(()) => {
                    self.recover_top();
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        Module {
            items,
            span: Span::new(0, self.src.len()),
            names: NameTable {
                numbered: std::mem::take(&mut self.numbered),
            },
        }
    }

    fn item(&mut self) -> PResult<Option<Item>> {
        let start = self.tok().span;
        if self.peek() != Tok::Dot {
            return self.expected("a directive");
        }
        match self.text() {
            ".version" => {
                self.bump();
                let t = self.tok();
                let text = self.text_of(t);
                let parsed = match t.kind {
                    Tok::Float | Tok::Int => text
                        .split_once('.')
                        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))),
                    _ => None,
                };
                let Some((major, minor)) = parsed else {
                    return self.expected("a version number like 7.0");
                };
                self.bump();
                Ok(Some(Item::Version {
                    major,
                    minor,
                    span: start.to(t.span),
                }))
            }
            ".target" => {
                self.bump();
                let mut targets = vec![self.name("a target name")?];
                while self.eat(Tok::Comma) {
                    targets.push(self.name("a target name")?);
                }
                let span = start.to(targets.last().map(|t| t.span).unwrap_or(start));
                Ok(Some(Item::Target { targets, span }))
            }
            ".address_size" => {
                self.bump();
                let t = self.expect(Tok::Int, "an address size")?;
                let size = match self.int_value(t)? {
                    Imm::Int { value: 32, .. } => 32,
                    Imm::Int { value: 64, .. } => 64,
                    _ => {
                        self.error(t.span, "address size must be 32 or 64");
                        return Err(());
                    }
                };
                Ok(Some(Item::AddressSize {
                    size,
                    span: start.to(t.span),
                }))
            }
            ".file" => {
                self.bump();
                let (index, _) = self.const_u32("file index")?;
                let s = self.expect(Tok::Str, "a file name string")?;
                let path = unquote(self.text_of(s));
                let mut extra = Vec::new();
                let mut end = s.span;
                while self.eat(Tok::Comma) {
                    let (v, sp) = self.const_int("file attribute")?;
                    extra.push(v as u64);
                    end = sp;
                }
                Ok(Some(Item::File {
                    index,
                    path,
                    extra,
                    span: start.to(end),
                }))
            }
            ".loc" => Ok(Some(Item::Loc(self.loc()?))),
            ".alias" => {
                self.bump();
                let alias = self.name("a function name")?;
                self.expect(Tok::Comma, "','")?;
                let aliasee = self.name("a function name")?;
                let semi = self.expect(Tok::Semi, "';'")?;
                Ok(Some(Item::Alias {
                    alias,
                    aliasee,
                    span: start.to(semi.span),
                }))
            }
            ".pragma" => {
                let (text, span) = self.pragma()?;
                Ok(Some(Item::Pragma { text, span }))
            }
            ".section" => {
                self.bump();
                let nt = self.tok();
                if nt.kind != Tok::Dot && nt.kind != Tok::Ident {
                    return self.expected("a section name");
                }
                self.bump();
                let name = self.text_of(nt).to_string();
                let open = self.expect(Tok::LBrace, "'{'")?;
                let mut depth = 1u32;
                let body_start = open.span.end as usize;
                loop {
                    match self.peek() {
                        Tok::Eof => {
                            self.error(open.span, "unterminated section: missing '}'");
                            return Err(());
                        }
                        Tok::LBrace => depth += 1,
                        Tok::RBrace => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.bump();
                }
                let close = self.bump();
                let body = self.src[body_start..close.span.start as usize].to_string();
                Ok(Some(Item::Section {
                    name,
                    body,
                    span: start.to(close.span),
                }))
            }
            _ => {
                let linkage = self.linkage();
                match self.text() {
                    ".entry" | ".func" if self.peek() == Tok::Dot => {
                        Ok(Some(Item::Function(self.function(linkage, start)?)))
                    }
                    w if self.peek() == Tok::Dot && SPACE_WORDS.contains(&w) => {
                        let mut d = self.var_decl(linkage, true)?;
                        let end = self.expect(Tok::Semi, "';'")?;
                        d.span = start.to(end.span);
                        Ok(Some(Item::Var(d)))
                    }
                    _ => {
                        if self.peek() == Tok::Dot {
                            let t = self.tok();
                            let w = self.text_of(t);
                            self.error(t.span, format!("unknown directive '{w}'"));
                            Err(())
                        } else {
                            self.expected("a declaration after linkage directive")
                        }
                    }
                }
            }
        }
    }

    fn linkage(&mut self) -> Vec<Linkage> {
        let mut v = Vec::new();
        while self.peek() == Tok::Dot {
            let l = match self.text() {
                ".extern" => Linkage::Extern,
                ".visible" => Linkage::Visible,
                ".weak" => Linkage::Weak,
                ".common" => Linkage::Common,
                _ => break,
            };
            self.bump();
            v.push(l);
        }
        v
    }

    fn loc(&mut self) -> PResult<Loc> {
        let start = self.bump().span;
        let (file, _) = self.const_u32("file index")?;
        let (line, _) = self.const_u32("line")?;
        let (col, mut end) = self.const_u32("column")?;
        let extra_start = end.end as usize;
        while self.peek() == Tok::Comma {
            self.bump();
            let kw = self.name("'function_name' or 'inlined_at'")?;
            end = kw.span;
            match kw.text.as_str() {
                "function_name" => end = self.name("a label")?.span,
                "inlined_at" => {
                    for _ in 0..3 {
                        end = self.const_u32("location")?.1;
                    }
                }
                other => {
                    self.error(kw.span, format!("unexpected '{other}' in .loc"));
                    return Err(());
                }
            }
        }
        let extra = self.src[extra_start..end.end as usize].trim().to_string();
        Ok(Loc {
            file,
            line,
            col,
            extra: if end.end as usize > extra_start {
                extra
            } else {
                String::new()
            },
            span: start.to(end),
        })
    }

    fn pragma(&mut self) -> PResult<(String, Span)> {
        let start = self.bump().span;
        let s = self.expect(Tok::Str, "a pragma string")?;
        let mut text = unquote(self.text_of(s));
        while self.eat(Tok::Comma) {
            let s2 = self.expect(Tok::Str, "a pragma string")?;
            text.push('\u{0}');
            text.push_str(&unquote(self.text_of(s2)));
        }
        let end = self.expect(Tok::Semi, "';'")?;
        Ok((text, start.to(end.span)))
    }

    // ---- declarations --------------------------------------------------------------------

    /// `space [.align N] [.vN] type [.ptr ...] [.attribute(...)] name[<n>][dims][= init], ...`
    /// without the trailing `;`. `multi` allows several comma-separated names.
    fn var_decl(&mut self, linkage: Vec<Linkage>, multi: bool) -> PResult<VarDecl> {
        let st = self.bump();
        let start = st.span;
        let space = StateSpace::from_name(&self.text_of(st)[1..]).ok_or(())?;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        let mut ptr: Option<PtrAttr> = None;
        let mut attributes = Vec::new();
        while self.peek() == Tok::Dot {
            let t = self.tok();
            let w = &self.text_of(t)[1..];
            if w == "align" {
                self.bump();
                let (a, _) = self.const_u32("alignment")?;
                match &mut ptr {
                    Some(p) if p.align.is_none() && ty.is_some() => p.align = Some(a),
                    _ => align = Some(a),
                }
            } else if let Some(n) = w.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()) {
                self.bump();
                if !matches!(n, 2 | 4 | 8) {
                    self.error(
                        t.span,
                        format!("invalid vector width '.v{n}' (expected .v2, .v4 or .v8)"),
                    );
                    return Err(());
                }
                vector = Some(n);
            } else if let Some(tt) = Type::from_name(w) {
                self.bump();
                if ty.is_some() {
                    self.error(t.span, "more than one type in declaration");
                    return Err(());
                }
                ty = Some(tt);
            } else if w == "ptr" {
                self.bump();
                ptr = Some(PtrAttr {
                    space: None,
                    align: None,
                });
            } else if let (Some(p), Some(sp)) = (&mut ptr, StateSpace::from_name(w)) {
                self.bump();
                p.space = Some(sp);
            } else if w == "attribute" {
                self.bump();
                self.expect(Tok::LParen, "'('")?;
                loop {
                    let a = self.expect(Tok::Dot, "an attribute")?;
                    match self.text_of(a) {
                        ".managed" => attributes.push(Attribute::Managed),
                        ".unified" => {
                            self.expect(Tok::LParen, "'('")?;
                            let (hi, _) = self.const_int("uuid")?;
                            self.expect(Tok::Comma, "','")?;
                            let (lo, _) = self.const_int("uuid")?;
                            self.expect(Tok::RParen, "')'")?;
                            attributes.push(Attribute::Unified(hi as u64, lo as u64));
                        }
                        other => {
                            self.error(a.span, format!("unknown variable attribute '{other}'"));
                            return Err(());
                        }
                    }
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                self.expect(Tok::RParen, "')'")?;
            } else {
                self.error(
                    t.span,
                    format!("unexpected '{}' in declaration", self.text_of(t)),
                );
                return Err(());
            }
        }
        let Some(ty) = ty else {
            return self.expected("a type in declaration");
        };
        let mut names = vec![self.declarator()?];
        if multi {
            while self.eat(Tok::Comma) {
                names.push(self.declarator()?);
            }
        }
        Ok(VarDecl {
            linkage,
            space,
            align,
            vector,
            ty,
            ptr,
            attributes,
            names,
            span: start.to(Span::new(
                self.prev_end() as usize,
                self.prev_end() as usize,
            )),
        })
    }

    fn declarator(&mut self) -> PResult<Declarator> {
        let name = self.name("a name")?;
        let mut range = None;
        if self.peek() == Tok::Lt {
            self.bump();
            let (n, _) = self.const_u32("register count")?;
            self.expect(Tok::Gt, "'>'")?;
            range = Some(n);
        }
        let mut dims = Vec::new();
        while self.peek() == Tok::LBracket {
            self.bump();
            if self.eat(Tok::RBracket) {
                dims.push(None);
                continue;
            }
            let (n, _) = self.const_count("array size", i64::MAX as u64)?;
            self.expect(Tok::RBracket, "']'")?;
            dims.push(Some(n));
        }
        let init = if self.eat(Tok::Eq) {
            Some(self.init()?)
        } else {
            None
        };
        Ok(Declarator {
            name,
            range,
            dims,
            init,
        })
    }

    fn init(&mut self) -> PResult<Init> {
        self.enter()?;
        let r = self.init_inner();
        self.leave();
        r
    }

    fn init_inner(&mut self) -> PResult<Init> {
        let t = self.tok();
        match t.kind {
            Tok::LBrace if self.peek_at(1) == Tok::Ident && self.peek_at(2) == Tok::Eq => {
                self.bump();
                let mut fields = Vec::new();
                loop {
                    let key = self.name("a field name")?;
                    self.expect(Tok::Eq, "'='")?;
                    let value = if self.peek() == Tok::Ident {
                        FieldValue::Word(self.name("a field value")?)
                    } else {
                        FieldValue::Int(self.const_int("field value")?.0)
                    };
                    fields.push((key, value));
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                let close = self.expect(Tok::RBrace, "'}' or ','")?;
                Ok(Init::Fields(fields, t.span.to(close.span)))
            }
            Tok::LBrace => {
                self.bump();
                let mut items = Vec::new();
                if self.peek() != Tok::RBrace {
                    loop {
                        items.push(self.init()?);
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                }
                let close = self.expect(Tok::RBrace, "'}' or ','")?;
                Ok(Init::List(items, t.span.to(close.span)))
            }
            Tok::Ident => self.init_addr(None, t.span),
            Tok::Int if self.peek_at(1) == Tok::LParen => {
                // `0xFF(var)`: a byte mask applied to the address of var.
                self.bump();
                let mask = match self.int_value(t)? {
                    Imm::Int { value, .. } => value as u64,
                    _ => unreachable!("int_value returns Int"),
                };
                self.bump();
                if self.peek() != Tok::Ident {
                    // `0xFF00(1000 + 546)`: the mask applied to a constant folds to a value.
                    let (v, _) = self.const_int("constant")?;
                    let close = self.expect(Tok::RParen, "')'")?;
                    let value = ((v as u64 & mask) >> mask.trailing_zeros().min(63)) as i64;
                    return Ok(Init::Imm(
                        Imm::Int {
                            value,
                            unsigned: false,
                        },
                        t.span.to(close.span),
                    ));
                }
                let inner = self.init_addr(Some(mask), t.span)?;
                let close = self.expect(Tok::RParen, "')'")?;
                Ok(match inner {
                    Init::Addr {
                        name,
                        generic,
                        offset,
                        mask,
                        ..
                    } => Init::Addr {
                        name,
                        generic,
                        offset,
                        mask,
                        span: t.span.to(close.span),
                    },
                    other => other,
                })
            }
            _ => {
                let (v, span) = self.expr()?;
                Ok(Init::Imm(v, span))
            }
        }
    }

    /// `var`, `var+off`, `generic(var)`, `generic(var)+off`.
    fn init_addr(&mut self, mask: Option<u64>, start: Span) -> PResult<Init> {
        let first = self.name("a variable name")?;
        let (name, generic) = if first.text == "generic" && self.peek() == Tok::LParen {
            self.bump();
            let n = self.name("a variable name")?;
            self.expect(Tok::RParen, "')'")?;
            (n, true)
        } else {
            (first, false)
        };
        let mut offset = 0;
        if self.peek() == Tok::Minus {
            // ptxas: "syntax error"; the grammar is var+offset (the offset may be negative).
            let t = self.bump();
            self.error(
                t.span,
                format!(
                    "bad initializer: an address takes an offset as '{0}+offset' ('{0}+-4'), not '{0}-offset'",
                    name.text
                ),
            );
            return Err(());
        }
        if self.eat(Tok::Plus) {
            let (v, _) = self.const_int("offset")?;
            offset = v;
        }
        Ok(Init::Addr {
            name,
            generic,
            offset,
            mask,
            span: start.to(Span::new(
                self.prev_end() as usize,
                self.prev_end() as usize,
            )),
        })
    }

    // ---- functions -----------------------------------------------------------------------

    fn function(&mut self, linkage: Vec<Linkage>, start: Span) -> PResult<Function> {
        let kw = self.bump();
        let kind = if self.text_of(kw) == ".entry" {
            FuncKind::Entry
        } else {
            FuncKind::Func
        };
        let rets = if kind == FuncKind::Func && self.peek() == Tok::LParen {
            Some(self.param_list()?)
        } else {
            None
        };
        let name = self.name("a function name")?;
        let (params, params_parens) = if self.peek() == Tok::LParen {
            (self.param_list()?, true)
        } else {
            (Vec::new(), false)
        };
        let mut noreturn = false;
        let mut perf = Vec::new();
        while self.peek() == Tok::Dot {
            let t = self.tok();
            match self.text_of(t) {
                ".noreturn" => {
                    self.bump();
                    // ptxas: a syntax error on an `.entry` (a kernel always returns).
                    if kind == FuncKind::Entry {
                        self.error(t.span, "'.noreturn' is only allowed on a .func");
                    }
                    noreturn = true;
                }
                ".maxntid" | ".reqntid" => {
                    self.bump();
                    let mut v = vec![self.const_u32("thread count")?.0];
                    while self.eat(Tok::Comma) {
                        v.push(self.const_u32("thread count")?.0);
                    }
                    let span = t.span.to(Span::new(
                        self.prev_end() as usize,
                        self.prev_end() as usize,
                    ));
                    perf.push(if self.text_of(t) == ".maxntid" {
                        PerfDirective::MaxNtid(v, span)
                    } else {
                        PerfDirective::ReqNtid(v, span)
                    });
                }
                ".minnctapersm" | ".maxnctapersm" | ".maxnreg" => {
                    self.bump();
                    let (n, s) = self.const_u32("count")?;
                    let span = t.span.to(s);
                    perf.push(match self.text_of(t) {
                        ".minnctapersm" => PerfDirective::MinNctaPerSm(n, span),
                        ".maxnctapersm" => PerfDirective::MaxNctaPerSm(n, span),
                        _ => PerfDirective::MaxNreg(n, span),
                    });
                }
                ".pragma" => {
                    let (text, span) = self.pragma()?;
                    perf.push(PerfDirective::Pragma(text, span));
                }
                // Thread-block-cluster directives (PTX 7.8+, sm_90). sm_5x has no clusters,
                // and a kernel launched there runs each CTA alone, which is a cluster of one:
                // `.explicitcluster` and `.maxclusterrank n` (an upper bound) hold, and are
                // dropped; `.reqnctapercluster` is kept only when it asks for one CTA.
                ".explicitcluster" => {
                    self.bump();
                }
                ".maxclusterrank" => {
                    self.bump();
                    self.const_u32("cluster rank")?;
                }
                ".reqnctapercluster" => {
                    self.bump();
                    let mut n = u64::from(self.const_u32("CTA count")?.0);
                    while self.eat(Tok::Comma) {
                        n *= u64::from(self.const_u32("CTA count")?.0);
                    }
                    if n != 1 {
                        let span = t.span.to(Span::new(
                            self.prev_end() as usize,
                            self.prev_end() as usize,
                        ));
                        self.error(
                            span,
                            format!(
                                "'.reqnctapercluster' of {n} CTAs needs thread block                                  clusters (sm_90); sm_5x runs every CTA alone"
                            ),
                        );
                    }
                }
                // Old nvopencc output declares functions without a `;`: the next item starts.
                w if is_item_start(w) => break,
                w => {
                    let w = w.to_string();
                    self.error(t.span, format!("unexpected '{w}' in function header"));
                    return Err(());
                }
            }
        }
        let body = if self.peek() == Tok::LBrace {
            Some(self.block()?)
        } else if self.peek() == Tok::Eof || (self.peek() == Tok::Dot && is_item_start(self.text()))
        {
            None
        } else {
            self.expect(Tok::Semi, "'{' or ';'")?;
            None
        };
        Ok(Function {
            linkage,
            kind,
            name,
            rets,
            params,
            params_parens,
            noreturn,
            perf,
            body,
            span: start.to(Span::new(
                self.prev_end() as usize,
                self.prev_end() as usize,
            )),
        })
    }

    fn param_list(&mut self) -> PResult<Vec<VarDecl>> {
        self.expect(Tok::LParen, "'('")?;
        let mut v = Vec::new();
        if self.peek() != Tok::RParen {
            loop {
                if !(self.is_dot(".param") || self.is_dot(".reg")) {
                    return self.expected("a .param or .reg parameter");
                }
                v.push(self.var_decl(Vec::new(), false)?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::RParen, "')' or ','")?;
        Ok(v)
    }

    fn block(&mut self) -> PResult<Block> {
        self.enter()?;
        let r = self.block_inner();
        self.leave();
        r
    }

    fn block_inner(&mut self) -> PResult<Block> {
        let open = self.expect(Tok::LBrace, "'{'")?;
        let first = self.stmts.len();
        let r = self.block_body(open);
        let stmts: Vec<Statement> = self.stmts.drain(first..).collect();
        let close = r?;
        Ok(Block {
            stmts,
            span: open.span.to(close.span),
        })
    }

    /// The statements of a block up to its `}` (pushed on `self.stmts`); the `}`.
    fn block_body(&mut self, open: Token) -> PResult<Token> {
        loop {
            match self.peek() {
                Tok::RBrace => break,
                Tok::Eof => {
                    if !self.fatal {
                        self.error(open.span, "unclosed '{': missing '}'");
                    }
                    return Err(());
                }
                _ => {}
            }
            let before = self.pos;
            match self.statement() {
                Ok(Some(s)) => self.stmts.push(s),
                Ok(None) => {}
                Err(()) => {
                    if self.fatal {
                        return Err(());
                    }
                    self.recover_stmt();
                    if self.pos == before && self.peek() != Tok::RBrace {
                        self.bump();
                    }
                }
            }
        }
        Ok(self.bump())
    }

    fn statement(&mut self) -> PResult<Option<Statement>> {
        let t = self.tok();
        match t.kind {
            Tok::LBrace => Ok(Some(Statement::Block(self.block()?))),
            Tok::Semi => {
                self.bump();
                Ok(None)
            }
            Tok::Dot => match self.text() {
                ".loc" => Ok(Some(Statement::Loc(self.loc()?))),
                ".pragma" => {
                    let (text, span) = self.pragma()?;
                    Ok(Some(Statement::Pragma(text, span)))
                }
                w if SPACE_WORDS.contains(&w) => {
                    let mut d = self.var_decl(Vec::new(), true)?;
                    let end = self.expect(Tok::Semi, "';'")?;
                    d.span = t.span.to(end.span);
                    Ok(Some(Statement::Var(d)))
                }
                w => {
                    let w = w.to_string();
                    self.error(
                        t.span,
                        format!("unexpected directive '{w}' in function body"),
                    );
                    Err(())
                }
            },
            Tok::Ident if self.peek_at(1) == Tok::Colon => {
                let name = self.name("a label")?;
                self.bump();
                if self.is_dot(".callprototype") {
                    return self.prototype(name).map(Some);
                }
                if self.is_dot(".branchtargets") || self.is_dot(".calltargets") {
                    let calls = self.bump().span.len() == ".calltargets".len();
                    let mut targets = vec![self.name("a target")?];
                    while self.eat(Tok::Comma) {
                        targets.push(self.name("a target")?);
                    }
                    let end = self.expect(Tok::Semi, "';'")?;
                    return Ok(Some(Statement::Targets {
                        span: name.span.to(end.span),
                        name,
                        calls,
                        targets,
                    }));
                }
                Ok(Some(Statement::Label(name)))
            }
            Tok::Ident | Tok::At => Ok(Some(Statement::Instr(self.instruction()?))),
            _ => self.expected("an instruction, declaration or label"),
        }
    }

    fn prototype(&mut self, name: Name) -> PResult<Statement> {
        self.bump();
        let rets = if self.peek() == Tok::LParen {
            Some(self.param_list()?)
        } else {
            None
        };
        let sink = self.name("'_'")?;
        if sink.text != "_" {
            self.error(sink.span, "expected '_' in .callprototype");
            return Err(());
        }
        let params = if self.peek() == Tok::LParen {
            self.param_list()?
        } else {
            Vec::new()
        };
        let noreturn = if self.is_dot(".noreturn") {
            self.bump();
            true
        } else {
            false
        };
        let end = self.expect(Tok::Semi, "';'")?;
        Ok(Statement::Prototype {
            span: name.span.to(end.span),
            name,
            rets,
            params,
            noreturn,
        })
    }

    // ---- instructions --------------------------------------------------------------------

    fn instruction(&mut self) -> PResult<Instruction> {
        let start = self.tok().span;
        let guard = if self.eat(Tok::At) {
            let negated = self.eat(Tok::Bang);
            let pred = self.name("a guard predicate")?;
            Some(Guard { negated, pred })
        } else {
            None
        };
        let op_tok = self.expect(Tok::Ident, "an opcode")?;
        let op_text = self.text_of(op_tok);
        let Some(opcode) = Opcode::from_name(op_text) else {
            self.error(op_tok.span, format!("unknown opcode '{op_text}'"));
            return Err(());
        };
        let info = opcode.info();
        let mut mods = Vec::with_capacity(self.glued_dots(op_tok.span.end));
        let mut end = op_tok.span;
        while self.peek() == Tok::Dot && self.tok().span.start == end.end {
            let t = self.bump();
            end = t.span;
            let word = &self.text_of(t)[1..];
            match classify(info, word) {
                Some(m) => mods.push(m),
                None => {
                    self.error(
                        t.span,
                        format!("unknown modifier '.{word}' for '{}'", info.name),
                    );
                    return Err(());
                }
            }
        }
        let mut operands = Vec::new();
        if self.peek() != Tok::Semi {
            operands.reserve_exact(self.operands_ahead());
            loop {
                operands.push(self.operand(opcode)?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        let semi = self.expect(Tok::Semi, "',' or ';'")?;
        // Exact capacities: a 4 MB file has about 130,000 instructions, each holding its
        // lists until the IR is built. (Nothing to do when the counts ahead were right.)
        operands.shrink_to_fit();
        mods.shrink_to_fit();
        let n = operands.len();
        if n < info.min_ops as usize || n > info.max_ops as usize {
            let want = if info.min_ops == info.max_ops {
                format!("{}", info.min_ops)
            } else {
                format!("{} to {}", info.min_ops, info.max_ops)
            };
            let span = operands
                .first()
                .map(|o| o.span().to(operands[n - 1].span()))
                .unwrap_or(op_tok.span);
            self.error(
                span,
                format!("'{}' takes {want} operands, found {n}", info.name),
            );
            return Err(());
        }
        Ok(Instruction {
            guard,
            opcode,
            opcode_span: op_tok.span,
            mods,
            operands,
            span: start.to(semi.span),
        })
    }

    /// How many `.word` tokens follow, each starting where the one before ends (`end` for
    /// the first): an instruction's modifiers, counted to allocate them at once. At most
    /// [`LOOKAHEAD`] tokens are looked at.
    fn glued_dots(&self, mut end: u32) -> usize {
        let mut n = 0;
        for t in self.toks[self.pos..].iter().take(LOOKAHEAD) {
            if t.kind != Tok::Dot || t.span.start != end {
                break;
            }
            end = t.span.end;
            n += 1;
        }
        n
    }

    /// How many operands the tokens up to the next `;` hold (commas outside brackets, plus
    /// one), to allocate the list at once: a guess the parse does not rely on, from at most
    /// [`LOOKAHEAD`] tokens (so that a missing `;` costs no long scans).
    fn operands_ahead(&self) -> usize {
        let mut depth = 0u32;
        let mut n = 1;
        for t in self.toks[self.pos..].iter().take(LOOKAHEAD) {
            match t.kind {
                Tok::Semi | Tok::Eof => break,
                Tok::LBrace | Tok::LBracket | Tok::LParen => depth += 1,
                Tok::RBrace | Tok::RBracket | Tok::RParen => depth = depth.saturating_sub(1),
                Tok::Comma if depth == 0 => n += 1,
                _ => {}
            }
        }
        n
    }

    fn operand(&mut self, op: Opcode) -> PResult<Operand> {
        self.enter()?;
        let r = self.operand_inner(op);
        self.leave();
        r
    }

    fn operand_inner(&mut self, op: Opcode) -> PResult<Operand> {
        let t = self.tok();
        match t.kind {
            Tok::LBrace => {
                self.bump();
                let mut elems = Vec::new();
                loop {
                    elems.push(self.operand(op)?);
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                let close = self.expect(Tok::RBrace, "'}' or ','")?;
                Ok(Operand::Vector(elems, t.span.to(close.span)))
            }
            Tok::LBracket => {
                self.bump();
                if self.peek() == Tok::Ident && self.peek_at(1) == Tok::Comma {
                    let mut elems = Vec::new();
                    loop {
                        elems.push(self.operand(op)?);
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                    let close = self.expect(Tok::RBracket, "']' or ','")?;
                    return Ok(Operand::TexArgs(elems, t.span.to(close.span)));
                }
                let mut a = self.addr_expr()?;
                let close = self.expect(Tok::RBracket, "']' to close the address")?;
                a.span = t.span.to(close.span);
                Ok(Operand::Address(a))
            }
            Tok::LParen if op == Opcode::Call => {
                self.bump();
                let mut elems = Vec::new();
                if self.peek() != Tok::RParen {
                    loop {
                        elems.push(self.operand(op)?);
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                }
                let close = self.expect(Tok::RParen, "')' or ','")?;
                Ok(Operand::List(elems, t.span.to(close.span)))
            }
            // `-r` negates a register source of a video instruction (`vmad`).
            Tok::Minus if self.peek_at(1) == Tok::Ident && op.info().rule == Rule::Video => {
                self.bump();
                let inner = self.operand(op)?;
                let span = t.span.to(inner.span());
                Ok(Operand::Neg(Box::new(inner), span))
            }
            Tok::Bang if self.peek_at(1) == Tok::Ident => {
                self.bump();
                let inner = self.operand(op)?;
                let span = t.span.to(inner.span());
                Ok(Operand::Not(Box::new(inner), span))
            }
            Tok::Ident => {
                let name = self.name("an operand")?;
                // `_` is a sink, also before `|` (`elect.sync _|p, mask`), where it
                // becomes the first name of a pair.
                if name.text == "_" && self.peek() != Tok::Pipe {
                    return Ok(Operand::Sink(name.span));
                }
                // `.x`-style component glued to the name.
                let comp = if self.peek() == Tok::Dot && self.tok().span.start == name.span.end {
                    let ct = self.tok();
                    if op.info().rule == Rule::Video {
                        // `r.b1`, `r.h10`, `r.b3210`: a video selector, not a component.
                        let w = self.text_of(ct);
                        if let Some(sel) = VideoSel::parse(&w[1..]) {
                            self.bump();
                            return Ok(Operand::Selected { name, sel });
                        }
                        let msg = format!(
                            "unknown video selector '{w}' (.b or .h and one to four digits 0-7)"
                        );
                        self.error(ct.span, msg);
                        return Err(());
                    }
                    match Component::from_name(&self.text_of(ct)[1..]) {
                        Some(c) => {
                            self.bump();
                            Some((c, ct.span))
                        }
                        None => {
                            let w = self.text_of(ct);
                            self.error(ct.span, format!("unknown vector component '{w}'"));
                            return Err(());
                        }
                    }
                } else {
                    None
                };
                if self.special[name.id as usize] {
                    return Ok(Operand::Special {
                        name,
                        comp: comp.map(|c| c.0),
                    });
                }
                if let Some((comp, _)) = comp {
                    return Ok(Operand::Elem { name, comp });
                }
                match self.peek() {
                    Tok::LBracket => {
                        self.bump();
                        let index = self.addr_expr()?;
                        let close = self.expect(Tok::RBracket, "']' to close the index")?;
                        let span = name.span.to(close.span);
                        Ok(Operand::Indexed {
                            base: name,
                            index: Box::new(index),
                            span,
                        })
                    }
                    Tok::Plus | Tok::Minus => {
                        let neg = self.bump().kind == Tok::Minus;
                        let (v, s) = self.const_int("offset")?;
                        Ok(Operand::NameOffset {
                            span: name.span.to(s),
                            name,
                            offset: if neg { v.wrapping_neg() } else { v },
                        })
                    }
                    Tok::Pipe => {
                        self.bump();
                        let second = self.name("a predicate after '|'")?;
                        Ok(Operand::PredPair(name, second))
                    }
                    // `WARP_SZ`, PTX's predefined identifier for the warp size: the
                    // constant 32 on every target (ptxas folds it into an immediate).
                    _ if name.text == "WARP_SZ" => Ok(Operand::Imm(
                        Imm::Int {
                            value: 32,
                            unsigned: false,
                        },
                        name.span,
                    )),
                    _ => Ok(Operand::Name(name)),
                }
            }
            Tok::Int
            | Tok::Float
            | Tok::F32
            | Tok::F64
            | Tok::Minus
            | Tok::Tilde
            | Tok::LParen
            | Tok::Plus
            | Tok::Bang => {
                let (v, span) = self.expr()?;
                Ok(Operand::Imm(v, span))
            }
            _ => self.expected("an operand"),
        }
    }

    /// Inside `[...]`: `name`, `name+imm`, `name-imm`, `name+-imm`, `imm`.
    fn addr_expr(&mut self) -> PResult<AddrExpr> {
        let start = self.tok().span;
        if self.peek() == Tok::Ident {
            let base = self.name("an address")?;
            let mut offset = 0i64;
            match self.peek() {
                Tok::Minus => {
                    let t = self.tok();
                    self.error(
                        t.span,
                        "malformed address: a negative offset is written [reg+-imm], not [reg-imm]",
                    );
                    return Err(());
                }
                Tok::Plus => {
                    self.bump();
                    if self.peek() == Tok::Ident {
                        let t = self.tok();
                        self.error(
                            t.span,
                            "malformed address: the offset must be a constant (only [reg+imm] is allowed)",
                        );
                        return Err(());
                    }
                    offset = self.const_int("address offset")?.0;
                }
                Tok::RBracket => {}
                _ => {
                    let t = self.tok();
                    let found = self.text_of(t).to_string();
                    self.error(
                        t.span,
                        format!("malformed address: expected '+', '-' or ']', found '{found}'"),
                    );
                    return Err(());
                }
            }
            Ok(AddrExpr {
                base: Some(base),
                offset,
                span: start.to(Span::new(
                    self.prev_end() as usize,
                    self.prev_end() as usize,
                )),
            })
        } else {
            if self.peek() == Tok::RBracket {
                let t = self.tok();
                self.error(t.span, "malformed address: empty brackets");
                return Err(());
            }
            let (v, span) = self.const_int("address")?;
            Ok(AddrExpr {
                base: None,
                offset: v,
                span,
            })
        }
    }
}

/// Classify a modifier word for an opcode: `None` if the opcode does not accept it.
pub(crate) fn classify(info: &OpInfo, word: &str) -> Option<Modifier> {
    if let Some(t) = Type::from_name(word) {
        return info.allows_type(t).then_some(Modifier::Type(t));
    }
    if info.spaces {
        if let Some(s) = StateSpace::from_name(word) {
            return Some(Modifier::Space(s));
        }
    }
    if info.vec {
        if let Some(n) = word.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()) {
            if matches!(n, 2 | 4 | 8) {
                return Some(Modifier::Vec(n));
            }
        }
    }
    if info.round {
        if let Some(r) = Rounding::from_name(word) {
            return Some(Modifier::Round(r));
        }
    }
    if info.cmp {
        if let Some(c) = CmpOp::from_name(word) {
            return Some(Modifier::Cmp(c));
        }
    }
    if let Some(f) = info.flag(word) {
        return Some(Modifier::Flag(f));
    }
    if info.open {
        return Some(Modifier::Other(word.to_string()));
    }
    None
}

/// The precedence of a binary operator [`Parser::binary`] continues an expression with
/// (higher binds tighter); `None` for any other token.
fn binary_precedence(t: Tok) -> Option<u8> {
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

fn is_item_start(w: &str) -> bool {
    matches!(
        w,
        ".version"
            | ".target"
            | ".address_size"
            | ".file"
            | ".section"
            | ".alias"
            | ".entry"
            | ".func"
            | ".extern"
            | ".visible"
            | ".weak"
            | ".common"
            | ".global"
            | ".const"
            | ".shared"
    )
}

/// Strip the quotes of a string token and resolve simple escapes.
fn unquote(s: &str) -> String {
    let inner = s.strip_prefix('"').unwrap_or(s);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name of a small kernel: equal texts share an id, different texts do not, and
    /// the name table splits numbered names onto the id of their prefix (the name of the
    /// `%r<N>` declaration), as the checker and the IR builder look ranges up.
    #[test]
    fn names_share_ids_by_text_and_split_onto_their_prefix() {
        let src = ".version 7.0\n.target sm_50\n.address_size 64\n\
                   .visible .entry k(.param .u64 p)\n{\n\
                   .reg .b32 %r<20>;\n.reg .b32 x, %r01;\n\
                   ld.param.u64 %r1, [p];\nmov.b32 %r2, %r1;\nmov.b32 x, %r10;\n\
                   mov.b32 %r01, x;\nmov.u32 %r3, %tid.x;\n@%r2 bra L;\nL:\nret;\n}\n";
        let f = SourceFile::new("t.ptx", src);
        let (m, d) = parse(&f);
        assert!(d.is_empty(), "{d:?}");
        let m = m.expect("module");
        let k = m.functions().next().expect("kernel");
        let mut names: Vec<&Name> = vec![&k.name];
        names.extend(
            k.params
                .iter()
                .flat_map(|p| p.names.iter().map(|d| &d.name)),
        );
        let mut range_id = None;
        for s in &k.body.as_ref().expect("body").stmts {
            match s {
                Statement::Var(v) => {
                    for d in &v.names {
                        if d.range.is_some() {
                            range_id = Some(d.name.id);
                        }
                        names.push(&d.name);
                    }
                }
                Statement::Instr(i) => {
                    names.extend(i.guard.as_ref().map(|g| &g.pred));
                    for o in &i.operands {
                        match o {
                            Operand::Name(n) | Operand::Special { name: n, .. } => names.push(n),
                            Operand::Address(a) => names.extend(a.base.as_ref()),
                            _ => {}
                        }
                    }
                }
                Statement::Label(n) => names.push(n),
                _ => {}
            }
        }
        assert!(names.len() > 15);
        for a in &names {
            for b in &names {
                assert_eq!(a.text == b.text, a.id == b.id, "{} {}", a.text, b.text);
            }
            assert!((a.id as usize) < m.names.len());
        }
        let range_id = range_id.expect("%r<20>");
        let split = |text: &str| {
            let n = names.iter().find(|n| *n.text == *text).expect(text);
            m.names.numbered(n)
        };
        assert_eq!(split("%r1"), Some((range_id, 1)));
        assert_eq!(split("%r10"), Some((range_id, 10)));
        assert_eq!(split("%r"), None);
        assert_eq!(split("x"), None);
        // A leading zero is its own name, not %r1 (split_numbered's rule).
        assert_eq!(split("%r01"), None);
        assert_ne!(split("%r01"), split("%r1"));
    }
}
