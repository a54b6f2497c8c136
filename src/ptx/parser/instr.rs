//! Instructions of the parser: an optional guard, the opcode with its modifiers (classified
//! against the opcode table, [`crate::ptx::opcodes`]), and the operands: registers, vectors,
//! immediates, labels, address expressions `[base+offset]` and the video selectors.
//!
//! In: the token stream at an instruction. Out: an
//! [`ast::Instruction`](crate::ptx::ast::Instruction) whose modifiers the opcode accepts, or a
//! diagnostic at the first word it does not accept.

use super::*;

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

impl<'a> Parser<'a> {
    // ---- instructions --------------------------------------------------------------------

    pub(super) fn instruction(&mut self) -> PResult<Instruction> {
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
    pub(super) fn glued_dots(&self, mut end: u32) -> usize {
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
    pub(super) fn operands_ahead(&self) -> usize {
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

    pub(super) fn operand(&mut self, op: Opcode) -> PResult<Operand> {
        self.enter()?;
        let r = self.operand_inner(op);
        self.leave();
        r
    }

    // Long by design: one arm per token an operand can start with.
    pub(super) fn operand_inner(&mut self, op: Opcode) -> PResult<Operand> {
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
    pub(super) fn addr_expr(&mut self) -> PResult<AddrExpr> {
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
