//! Diagnostics: every user-facing error carries a file, a line, a column and a caret.
//!
//! In: a [`SourceFile`] (name plus text) and byte spans into it. Out: [`Diagnostic`] values that
//! render as
//!
//! ```text
//! k.ptx:12:9: error: undeclared register '%r9'
//!    12 |     add.s32 %r9, %r1, 1;
//!       |         ^^^
//! ```
//!
//! Invariants: a span never points past the end of its file (rendering clamps it anyway, so a
//! bad span can never panic), lines and columns are 1-based, and columns count characters, not
//! bytes, so a caret lines up under non-ASCII text too. Source text is always valid UTF-8 here:
//! [`SourceFile::from_bytes`] replaces invalid sequences before anything else sees them.

use std::fmt;
use std::sync::Arc;

/// A half-open byte range `start..end` into one source file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
}

/// A named source text with a line index, shared cheaply between diagnostics.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<u32>,
}

/// The offset of each line's first byte: 0, and one past every `\n` (found with `memchr`,
/// many bytes at a time: every file compiled goes through here, and byte by byte it was a
/// visible share of reading the input).
fn line_starts(text: &[u8]) -> Vec<u32> {
    let mut starts = vec![0u32];
    starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i as u32 + 1));
    starts
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<SourceFile> {
        let text = text.into();
        let line_starts = line_starts(text.as_bytes());
        Arc::new(SourceFile {
            name: name.into(),
            text,
            line_starts,
        })
    }

    /// Accept arbitrary bytes: invalid UTF-8 becomes U+FFFD, which the lexer then reports as an
    /// unexpected character at its exact position instead of the whole file being refused.
    pub fn from_bytes(name: impl Into<String>, bytes: &[u8]) -> Arc<SourceFile> {
        SourceFile::new(name, String::from_utf8_lossy(bytes).into_owned())
    }

    /// 1-based line of a byte offset (what [`SourceFile::line_col`] gives, without the column).
    pub fn line_of(&self, offset: u32) -> usize {
        let offset = offset.min(self.text.len() as u32);
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// [`Self::line_of`], starting from `hint`, a line an earlier call returned (or 0): the
    /// builder asks for the line of every statement in order, so the answer is nearly
    /// always that line or one of the next few, found in a step or two instead of a binary
    /// search. Any hint gives the same answer (it falls back to the search); `hint` is set
    /// to the answer.
    pub fn line_from(&self, offset: u32, hint: &mut usize) -> usize {
        let offset = offset.min(self.text.len() as u32);
        // `line_of` is the number of line starts at or before `offset` (the first is 0).
        let starts = &self.line_starts;
        let mut line = *hint;
        if line >= 1 && line <= starts.len() && starts[line - 1] <= offset {
            let mut steps = 0;
            while line < starts.len() && starts[line] <= offset && steps < 8 {
                line += 1;
                steps += 1;
            }
            if line == starts.len() || starts[line] > offset {
                *hint = line;
                return line;
            }
        }
        line = self.line_of(offset);
        *hint = line;
        line
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = offset.min(self.text.len() as u32);
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() + 1;
        (line + 1, col)
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .map(|&e| e as usize)
            .unwrap_or(self.text.len());
        self.text[start as usize..end].trim_end_matches(['\n', '\r'])
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

/// One message about one place in one file.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub file: Arc<SourceFile>,
}

impl Diagnostic {
    pub fn error(file: &Arc<SourceFile>, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            file: file.clone(),
        }
    }

    pub fn warning(file: &Arc<SourceFile>, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(file, span, message)
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `file:line:col` of the start of the span.
    pub fn location(&self) -> (usize, usize) {
        self.file.line_col(self.span.start)
    }
}

impl fmt::Display for Diagnostic {
    /// `file:line:col: severity: message`, the source line, and a caret line under the span
    /// (at least one caret, clipped to the end of the line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, col) = self.location();
        writeln!(
            f,
            "{}:{}:{}: {}: {}",
            self.file.name, line, col, self.severity, self.message
        )?;
        let text = self.file.line_text(line);
        let gutter = line.to_string().len();
        writeln!(f, "{:>gutter$} | {}", line, text.replace('\t', " "))?;
        let line_chars = text.chars().count();
        let (end_line, end_col) = self.file.line_col(self.span.end);
        let end_col = if end_line == line {
            end_col
        } else {
            line_chars + 1
        };
        let width = end_col.saturating_sub(col).max(1);
        write!(
            f,
            "{:>gutter$} | {}{}",
            "",
            " ".repeat(col - 1),
            "^".repeat(width)
        )
    }
}

/// A list of diagnostics that contains at least one error: what the library's fallible entry
/// points return.
#[derive(Debug, thiserror::Error)]
#[error("{}", render_all(.0))]
pub struct Diagnostics(pub Vec<Diagnostic>);

/// Render each diagnostic followed by a blank line, the way the CLI prints them.
pub fn render_all(diags: &[Diagnostic]) -> String {
    let mut s = String::new();
    for d in diags {
        s.push_str(&d.to_string());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_line_and_caret() {
        let f = SourceFile::new("k.ptx", "line one\n  add.s32 %r9, %r1;\n");
        let start = f.text.find("%r9").unwrap();
        let d = Diagnostic::error(&f, Span::new(start, start + 3), "undeclared register '%r9'");
        assert_eq!(
            d.to_string(),
            "k.ptx:2:11: error: undeclared register '%r9'\n2 |   add.s32 %r9, %r1;\n  |           ^^^"
        );
    }

    #[test]
    fn empty_span_at_end_of_file_gets_one_caret() {
        let f = SourceFile::new("e.ptx", "abc");
        let d = Diagnostic::error(&f, Span::new(3, 3), "unexpected end of file");
        assert_eq!(
            d.to_string(),
            "e.ptx:1:4: error: unexpected end of file\n1 | abc\n  |    ^"
        );
    }

    #[test]
    fn columns_count_characters_and_invalid_utf8_is_replaced() {
        let f = SourceFile::from_bytes("u.ptx", b"\xff\xfe x");
        let x = f.text.find('x').unwrap();
        assert_eq!(f.line_col(x as u32), (1, 4));
        // A span past the end is clamped rather than panicking.
        let d = Diagnostic::error(&f, Span::new(1000, 2000), "m");
        assert!(d.to_string().starts_with("u.ptx:1:5: error: m"));
    }

    /// `line_from` gives `line_of`'s answer from any hint: the line before, the same, a few
    /// after, far after, and past the end, at every offset of a text (line starts, ends,
    /// empty lines, past the end).
    #[test]
    fn line_from_matches_line_of() {
        let f = SourceFile::new(
            "h.ptx",
            "a\n\nbc\nd\n\n\n\n\n\n\n\n\n\nlast line\n\nx".to_string(),
        );
        let lines = f.line_starts.len();
        for offset in 0..f.text.len() as u32 + 3 {
            for start in 0..lines + 3 {
                let mut hint = start;
                let got = f.line_from(offset, &mut hint);
                assert_eq!(got, f.line_of(offset), "offset {offset}, hint {start}");
                assert_eq!(hint, got);
            }
        }
    }

    /// The line index finds exactly the newlines a byte loop finds: at every position of a
    /// word and in the tail, next to each other, and next to bytes a word-at-a-time search
    /// could mistake for one (`\x0b` just above a newline, `\x0a ^ 0x80`).
    #[test]
    fn line_starts_match_a_byte_loop() {
        let by_bytes = |t: &[u8]| {
            let mut v = vec![0u32];
            v.extend(
                t.iter()
                    .enumerate()
                    .filter(|&(_, &b)| b == b'\n')
                    .map(|(i, _)| i as u32 + 1),
            );
            v
        };
        let alphabet = [b'\n', 0x0b, 0x8a, 0x09, b'a', 0x00, 0xff];
        let mut rng = crate::verify::Rng::new(0x2545_f491_4f6c_dd1d);
        for len in 0..40 {
            for _ in 0..200 {
                let text: Vec<u8> = (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                    .collect();
                assert_eq!(line_starts(&text), by_bytes(&text), "{text:?}");
            }
        }
    }
}
