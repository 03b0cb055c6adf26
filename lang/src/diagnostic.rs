//! Diagnostics: the first error of a phase, with its source position.
//!
//! Errors carry a byte offset; [`LineIndex`] turns it into the 1-based line
//! and column starlark-go reports (columns count Unicode scalar values, a
//! tab is one column), and [`Diagnostic::render`] writes the
//! `<codemode>:LINE:COL: message` form of `docs/architecture.md`
//! (section 5), followed by the error's [`Hint`] when it has one.

use crate::ast::Pos;
use crate::hint::Hint;
use std::fmt;

/// The file name every position is reported under.
pub const FILE_NAME: &str = "<codemode>";

/// One error of the lexer, parser or resolver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Byte offset of the error in the source.
    pub pos: Pos,
    /// starlark-go's wording of the error, without position.
    pub message: String,
    /// How to write what the program tried, when it tried a construct the
    /// language lacks.
    pub hint: Option<Hint>,
}

impl Diagnostic {
    pub fn new(pos: Pos, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            pos,
            message: message.into(),
            hint: None,
        }
    }

    /// This diagnostic with `hint`.
    pub fn with_hint(mut self, hint: Option<Hint>) -> Diagnostic {
        self.hint = hint;
        self
    }

    /// `<codemode>:LINE:COL: message`, positions computed against `source`,
    /// then ` (hint: TEXT)` when there is a hint.
    pub fn render(&self, source: &str) -> String {
        let (line, col) = LineIndex::new(source).line_col(self.pos);
        let hint = self.hint.map(|h| h.to_string()).unwrap_or_default();
        format!("{FILE_NAME}:{line}:{col}: {}{hint}", self.message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {}: {}", self.pos, self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// Maps byte offsets to 1-based (line, column) pairs.
#[derive(Clone, Debug)]
pub struct LineIndex<'s> {
    source: &'s str,
    /// Byte offset of the start of every line.
    line_starts: Vec<u32>,
}

impl<'s> LineIndex<'s> {
    pub fn new(source: &'s str) -> LineIndex<'s> {
        // Like starlark-go's scanner, a line ends at "\n", at "\r\n", and
        // at a lone "\r".
        let bytes = source.as_bytes();
        let mut line_starts = vec![0];
        line_starts.extend(bytes.iter().enumerate().filter_map(|(i, &b)| {
            let ends = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            ends.then_some(i as u32 + 1)
        }));
        LineIndex {
            source,
            line_starts,
        }
    }

    /// The 1-based line and column of byte offset `pos`. An offset past the
    /// end, or inside a multi-byte character, is clamped to the nearest
    /// character boundary before it.
    pub fn line_col(&self, pos: Pos) -> (u32, u32) {
        let mut pos = (pos as usize).min(self.source.len());
        while !self.source.is_char_boundary(pos) {
            pos -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s as usize <= pos);
        let start = self.line_starts[line - 1] as usize;
        let col = self.source[start..pos].chars().count() + 1;
        (line as u32, col as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_tabs_as_one() {
        let src = "def main():\n    x = \"ééé\" + y\n\tz\n";
        let idx = LineIndex::new(src);
        assert_eq!(idx.line_col(0), (1, 1));
        let y = src.find('y').unwrap() as u32;
        assert_eq!(idx.line_col(y), (2, 17));
        let z = src.find('z').unwrap() as u32;
        assert_eq!(idx.line_col(z), (3, 2));
        assert_eq!(idx.line_col(src.len() as u32), (4, 1));
        assert_eq!(idx.line_col(u32::MAX), (4, 1));
    }

    #[test]
    fn carriage_returns_end_lines_like_starlark_go() {
        // "\r\n" is one line end; a lone "\r" is one too.
        let idx = LineIndex::new("a\r\nb\rc\nd");
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(5), (3, 1));
        assert_eq!(idx.line_col(7), (4, 1));
    }

    #[test]
    fn render_uses_the_codemode_file_name() {
        let d = Diagnostic::new(4, "undefined: y");
        assert_eq!(d.render("abc\nxy"), "<codemode>:2:1: undefined: y");
        let d = Diagnostic::new(0, "undefined: true").with_hint(Some(Hint::Constants));
        assert_eq!(
            d.render("true"),
            "<codemode>:1:1: undefined: true (hint: the constants are True, False and None)"
        );
    }
}
