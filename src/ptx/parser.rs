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
//!
//! # Files of this module
//!
//! - `expr.rs`: Numbers and constant expressions of the parser.
//! - `decl.rs`: Declarations of the parser.
//! - `instr.rs`: Instructions of the parser.

mod decl;
mod expr;
mod instr;
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
