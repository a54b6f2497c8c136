//! The PTX front end: lexer, parser, AST with spans, semantic checks. (Being built; issue 2.)
