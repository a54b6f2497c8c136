//! Declarations of the parser: state-space variable declarations (`.reg`, `.global`, `.shared`,
//! `.const`, `.local`, `.param`, with alignment, vector width, array dimensions and attributes),
//! their declarators (`%r<100>` ranges, `a[4][8]`) and their initializers (scalars, brace
//! lists, addresses of variables and functions).
//!
//! In: the token stream at a declaration. Out: an [`ast::VarDecl`](crate::ptx::ast::VarDecl),
//! or a diagnostic; the parser then recovers at the next statement or item.

use super::*;

impl<'a> Parser<'a> {
    // ---- declarations --------------------------------------------------------------------

    /// `space [.align N] [.vN] type [.ptr ...] [.attribute(...)] name[<n>][dims][= init], ...`
    /// without the trailing `;`. `multi` allows several comma-separated names.
    pub(super) fn var_decl(&mut self, linkage: Vec<Linkage>, multi: bool) -> PResult<VarDecl> {
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

    pub(super) fn declarator(&mut self) -> PResult<Declarator> {
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

    pub(super) fn init(&mut self) -> PResult<Init> {
        self.enter()?;
        let r = self.init_inner();
        self.leave();
        r
    }

    pub(super) fn init_inner(&mut self) -> PResult<Init> {
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
    pub(super) fn init_addr(&mut self, mask: Option<u64>, start: Span) -> PResult<Init> {
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
}
