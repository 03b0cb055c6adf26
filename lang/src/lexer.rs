//! The lexer: source text to the token triples the lalrpop parser reads.
//!
//! It owns everything starlark-go's scanner decides: Python-style layout
//! (NEWLINE, INDENT and OUTDENT, blank and comment-only lines, implicit line
//! joining inside brackets, backslash continuations, tab stops computed the
//! way starlark-go computes them), the bodies of string, bytes and number
//! literals with their escapes, and every scanner error with starlark-go's
//! wording and position. Literals without escapes borrow the source;
//! decoded ones are written to the caller's arena, so lexing allocates
//! nothing per token on the heap. Bracket depth and indentation depth are
//! bounded by [`MAX_NESTING`].
//!
//! A syntax error is worded the way starlark-go's recursive-descent parser
//! words it, from a little context about the tokens handed out before it
//! (the innermost open bracket and what opened it, the last few tokens,
//! the latest `if`). Keeping that context costs about a third of the
//! lexer's own work per token, and it is needed once per failed parse at
//! most; so the parser runs on a lexer that keeps none of it
//! (`Lexer<false>`, [`Lexer::new`]), and after a syntax error
//! [`crate::parse`] replays the same tokens through one that does
//! (`Lexer<true>`, [`Lexer::with_context`]). Lexing is a function of the
//! source alone, so the replay ends in exactly the state the parser saw.

use crate::ast::Literal;
use crate::token::{Raw, Tok};
use crate::MAX_NESTING;
use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;
use logos::Logos;

/// A scanner error: starlark-go's message and the byte offset it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub pos: usize,
    pub message: String,
}

impl LexError {
    pub(crate) fn new(pos: usize, message: impl Into<String>) -> LexError {
        LexError {
            pos,
            message: message.into(),
        }
    }
}

/// The message for nesting beyond [`MAX_NESTING`].
pub(crate) const TOO_DEEP: &str = "nesting too deep";

/// What an open bracket belongs to; the parser's error wording depends on
/// it (a call wants `','`, a group wants `')'`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bracket {
    Group,
    Call,
    DefParams,
    Load,
    List,
    Index,
    Dict,
}

/// A token with its byte range.
pub(crate) type Spanned<'a> = (usize, Tok<'a>, usize);

/// The lexer, an iterator of lalrpop triples. After an error it yields
/// nothing more. With `CONTEXT`, it also keeps what syntax errors are
/// worded from (see the module's documentation).
pub struct Lexer<'a, const CONTEXT: bool = false> {
    src: &'a str,
    arena: &'a Bump,
    raw: logos::Lexer<'a, Raw>,
    /// Indentation columns of the open blocks; starts as `[0]`.
    indents: Vec<usize>,
    /// INDENT (> 0) or OUTDENT (< 0) tokens still to emit.
    pending: i32,
    /// The next token starts a line: measure indentation first.
    line_start: bool,
    /// The current line has shown nothing but blanks and a comment so far.
    blank: bool,
    /// Open brackets.
    depth: usize,
    /// Whether the newest token ends a line (a NEWLINE or OUTDENT), or
    /// there is none yet.
    line_ended: bool,
    /// Tokens emitted so far.
    emitted: usize,
    done: bool,
    // What syntax errors are worded from; kept with `CONTEXT` only.
    /// What each open bracket belongs to.
    brackets: Vec<Bracket>,
    /// Position of the latest `if` at each bracket depth.
    last_if: Vec<usize>,
    /// The last three tokens emitted, a ring whose newest entry is at
    /// `head` (a ring rather than a shifted array: shifting cost ~30
    /// instructions per token); see [`Lexer::recent`].
    ring: [Option<Spanned<'a>>; 3],
    head: usize,
    /// The innermost open bracket just before the newest token was read.
    pub(crate) ctx: Option<Bracket>,
    /// The bracket depth just before the newest token was read.
    pub(crate) ctx_depth: usize,
}

impl<'a> Lexer<'a> {
    /// The lexer the parser runs on.
    pub fn new(arena: &'a Bump, src: &'a str) -> Lexer<'a> {
        Lexer::start(arena, src)
    }
}

impl<'a> Lexer<'a, true> {
    /// A lexer that keeps the context syntax errors are worded from.
    pub(crate) fn with_context(arena: &'a Bump, src: &'a str) -> Lexer<'a, true> {
        Lexer::start(arena, src)
    }
}

impl<'a, const CONTEXT: bool> Lexer<'a, CONTEXT> {
    fn start(arena: &'a Bump, src: &'a str) -> Lexer<'a, CONTEXT> {
        Lexer {
            src,
            arena,
            raw: Raw::lexer(src),
            // Room for the usual depths up front: each push past a
            // capacity would reallocate (these stacks start empty in
            // every execution).
            indents: {
                let mut v = Vec::with_capacity(16);
                v.push(0);
                v
            },
            pending: 0,
            line_start: true,
            blank: false,
            depth: 0,
            line_ended: true,
            emitted: 0,
            done: false,
            brackets: Vec::with_capacity(16),
            last_if: Vec::with_capacity(16),
            ring: [None; 3],
            head: 0,
            ctx: None,
            ctx_depth: 0,
        }
    }

    /// How many tokens the lexer has handed out.
    pub(crate) fn emitted(&self) -> usize {
        self.emitted
    }

    /// The position of the latest `if` at bracket depth `depth`.
    pub(crate) fn last_if(&self, depth: usize) -> Option<usize> {
        self.last_if.get(depth).copied()
    }

    /// The last three tokens emitted, newest first.
    pub(crate) fn recent(&self) -> [Option<Spanned<'a>>; 3] {
        let h = self.head;
        [self.ring[h], self.ring[(h + 2) % 3], self.ring[(h + 1) % 3]]
    }

    /// The token emitted before the newest.
    fn previous(&self) -> Option<Spanned<'a>> {
        self.ring[(self.head + 2) % 3]
    }

    fn emit(&mut self, start: usize, tok: Tok<'a>, end: usize) -> Spanned<'a> {
        self.blank = false;
        self.emitted += 1;
        self.line_ended = matches!(tok, Tok::Newline | Tok::Outdent);
        if CONTEXT {
            self.head = if self.head == 2 { 0 } else { self.head + 1 };
            self.ring[self.head] = Some((start, tok, end));
        }
        (start, tok, end)
    }

    fn fail(&mut self, pos: usize, message: impl Into<String>) -> LexError {
        self.done = true;
        LexError::new(pos, message)
    }

    fn last_tok(&self) -> Option<Tok<'a>> {
        self.ring[self.head].map(|(_, t, _)| t)
    }

    /// Records what the opening bracket `raw` belongs to (with `CONTEXT`).
    fn open_bracket(&mut self, raw: Raw) {
        let last = self.last_tok();
        let operand = last.is_some_and(|t| t.ends_operand());
        let kind = match raw {
            Raw::LParen => match (last, self.previous().map(|r| r.1)) {
                (Some(Tok::Load), _) => Bracket::Load,
                (Some(Tok::Ident(_)), Some(Tok::Def)) => Bracket::DefParams,
                _ if operand => Bracket::Call,
                _ => Bracket::Group,
            },
            Raw::LBrack if operand => Bracket::Index,
            Raw::LBrack => Bracket::List,
            _ => Bracket::Dict,
        };
        self.brackets.push(kind);
    }

    /// Measures the indentation of a new line and queues INDENT/OUTDENT.
    fn start_line(&mut self) -> Result<(), LexError> {
        let bytes = self.src.as_bytes();
        let start = self.raw.span().end;
        let mut i = start;
        let mut col = 0usize;
        while let Some(&b) = bytes.get(i) {
            match b {
                b' ' => col += 1,
                // starlark-go advances to the next multiple of 8 of the
                // *character* count read so far, not of the visual column.
                b'\t' => col += 8 - (i - start) % 8,
                _ => break,
            }
            i += 1;
        }
        self.raw.bump(i - start);
        self.blank = matches!(
            bytes.get(i),
            None | Some(b'#') | Some(b'\n') | Some(b'\r') | Some(0)
        );
        if self.blank || self.depth > 0 {
            return Ok(());
        }
        let cur = self.indents.last().copied().unwrap_or(0);
        if col > cur {
            if self.indents.len() > MAX_NESTING {
                return Err(self.fail(i, TOO_DEEP));
            }
            self.indents.push(col);
            self.pending = 1;
        } else if col < cur {
            while self.indents.len() > 1 && col < self.indents.last().copied().unwrap_or(0) {
                self.indents.pop();
                self.pending -= 1;
            }
            if self.indents.last().copied().unwrap_or(0) != col {
                return Err(self.fail(i, "unindent does not match any outer indentation level"));
            }
        }
        Ok(())
    }

    fn next_token(&mut self) -> Option<Result<Spanned<'a>, LexError>> {
        loop {
            if self.done {
                return None;
            }
            let at_line_start = self.line_start;
            if self.line_start {
                self.line_start = false;
                if let Err(e) = self.start_line() {
                    return Some(Err(e));
                }
            }
            if CONTEXT {
                self.ctx = self.brackets.last().copied();
                self.ctx_depth = self.brackets.len();
            }
            if self.pending != 0 {
                let pos = self.raw.span().end;
                let tok = if self.pending > 0 {
                    self.pending -= 1;
                    Tok::Indent
                } else {
                    self.pending += 1;
                    Tok::Outdent
                };
                return Some(Ok(self.emit(pos, tok, pos)));
            }
            let raw = match self.raw.next() {
                None => {
                    let end = self.src.len();
                    if self.indents.len() > 1 {
                        if at_line_start {
                            self.pending = 1 - self.indents.len() as i32;
                            self.indents.truncate(1);
                            continue;
                        }
                        self.line_start = true;
                        return Some(Ok(self.emit(end, Tok::Newline, end)));
                    }
                    self.done = true;
                    if self.line_ended {
                        return None;
                    }
                    return Some(Ok(self.emit(end, Tok::EofNewline, end)));
                }
                Some(Err(())) => {
                    let pos = self.raw.span().start;
                    let c = self.src[pos..].chars().next().unwrap_or('\0');
                    let msg = format!("unexpected input character {}", quote_rune(c));
                    return Some(Err(self.fail(pos, msg)));
                }
                Some(Ok(raw)) => raw,
            };
            let span = self.raw.span();
            let (start, end) = (span.start, span.end);
            let tok = match raw {
                Raw::Newline => {
                    self.line_start = true;
                    if self.depth > 0 || self.blank {
                        continue;
                    }
                    Tok::Newline
                }
                Raw::Backslash => return Some(Err(self.fail(end, "stray backslash in program"))),
                Raw::Ident => Tok::Ident(self.raw.slice()),
                Raw::Number | Raw::DotNumber => {
                    return Some(
                        self.number(start)
                            .map(|(tok, end)| self.emit(start, tok, end)),
                    )
                }
                Raw::Quote | Raw::PrefixRQuote | Raw::BytesQuote | Raw::PrefixRbQuote => {
                    let is_raw = matches!(raw, Raw::PrefixRQuote | Raw::PrefixRbQuote);
                    let is_bytes = matches!(raw, Raw::BytesQuote | Raw::PrefixRbQuote);
                    let r = self.string(start, end - 1, is_raw, is_bytes);
                    return Some(r.map(|(tok, end)| self.emit(start, tok, end)));
                }
                Raw::LParen | Raw::LBrack | Raw::LBrace => {
                    if self.depth >= MAX_NESTING {
                        return Some(Err(self.fail(start, TOO_DEEP)));
                    }
                    self.depth += 1;
                    if CONTEXT {
                        self.open_bracket(raw);
                    }
                    match raw {
                        Raw::LParen => Tok::LParen,
                        Raw::LBrack => Tok::LBrack,
                        _ => Tok::LBrace,
                    }
                }
                Raw::RParen | Raw::RBrack | Raw::RBrace => {
                    if self.depth == 0 {
                        let c = &self.src[start..end];
                        return Some(Err(self.fail(start, format!("unexpected '{c}'"))));
                    }
                    self.depth -= 1;
                    if CONTEXT {
                        self.brackets.pop();
                    }
                    match raw {
                        Raw::RParen => Tok::RParen,
                        Raw::RBrack => Tok::RBrack,
                        _ => Tok::RBrace,
                    }
                }
                Raw::If => {
                    if CONTEXT {
                        let depth = self.depth;
                        if self.last_if.len() <= depth {
                            self.last_if.resize(depth + 1, 0);
                        }
                        self.last_if[depth] = start;
                    }
                    Tok::If
                }
                Raw::And => Tok::And,
                Raw::Break => Tok::Break,
                Raw::Continue => Tok::Continue,
                Raw::Def => Tok::Def,
                Raw::Elif => Tok::Elif,
                Raw::Else => Tok::Else,
                Raw::For => Tok::For,
                Raw::In => Tok::In,
                Raw::Lambda => Tok::Lambda,
                Raw::Load => Tok::Load,
                Raw::Not => Tok::Not,
                Raw::Or => Tok::Or,
                Raw::Pass => Tok::Pass,
                Raw::Return => Tok::Return,
                Raw::While => Tok::While,
                Raw::Reserved => Tok::Illegal(self.raw.slice()),
                Raw::Plus => Tok::Plus,
                Raw::Minus => Tok::Minus,
                Raw::Star => Tok::Star,
                Raw::Slash => Tok::Slash,
                Raw::SlashSlash => Tok::SlashSlash,
                Raw::Percent => Tok::Percent,
                Raw::Amp => Tok::Amp,
                Raw::Pipe => Tok::Pipe,
                Raw::Caret => Tok::Caret,
                Raw::LtLt => Tok::LtLt,
                Raw::GtGt => Tok::GtGt,
                Raw::Tilde => Tok::Tilde,
                Raw::Dot => Tok::Dot,
                Raw::Comma => Tok::Comma,
                Raw::Eq => Tok::Eq,
                Raw::Semi => Tok::Semi,
                Raw::Colon => Tok::Colon,
                Raw::Lt => Tok::Lt,
                Raw::Gt => Tok::Gt,
                Raw::Ge => Tok::Ge,
                Raw::Le => Tok::Le,
                Raw::EqEq => Tok::EqEq,
                Raw::Ne => Tok::Ne,
                Raw::PlusEq => Tok::PlusEq,
                Raw::MinusEq => Tok::MinusEq,
                Raw::StarEq => Tok::StarEq,
                Raw::SlashEq => Tok::SlashEq,
                Raw::SlashSlashEq => Tok::SlashSlashEq,
                Raw::PercentEq => Tok::PercentEq,
                Raw::AmpEq => Tok::AmpEq,
                Raw::PipeEq => Tok::PipeEq,
                Raw::CaretEq => Tok::CaretEq,
                Raw::LtLtEq => Tok::LtLtEq,
                Raw::GtGtEq => Tok::GtGtEq,
                Raw::StarStar => Tok::StarStar,
            };
            return Some(Ok(self.emit(start, tok, end)));
        }
    }

    /// Scans a number literal starting at `start` (a digit, or a `.`
    /// followed by a digit), with starlark-go's rules and error positions.
    fn number(&mut self, start: usize) -> Result<(Tok<'a>, usize), LexError> {
        let src = self.src;
        let b = src.as_bytes();
        let at = |i: usize| b.get(i).copied().unwrap_or(0);
        let mut i = start;
        let (mut fraction, mut exponent) = (false, false);
        if at(i) == b'.' {
            fraction = true;
        } else if at(i) == b'0' {
            i += 1;
            match at(i) {
                b'.' => fraction = true,
                b'x' | b'X' => {
                    i += 1;
                    if !at(i).is_ascii_hexdigit() {
                        return Err(self.fail(start, "invalid hex literal"));
                    }
                    while at(i).is_ascii_hexdigit() {
                        i += 1;
                    }
                }
                b'o' | b'O' => {
                    i += 1;
                    if !matches!(at(i), b'0'..=b'7') {
                        return Err(self.fail(i, "invalid octal literal"));
                    }
                    while matches!(at(i), b'0'..=b'7') {
                        i += 1;
                    }
                }
                b'b' | b'B' => {
                    i += 1;
                    if !matches!(at(i), b'0' | b'1') {
                        return Err(self.fail(i, "invalid binary literal"));
                    }
                    while matches!(at(i), b'0' | b'1') {
                        i += 1;
                    }
                }
                _ => {
                    let (mut zeros, mut octal) = (true, true);
                    while at(i).is_ascii_digit() {
                        zeros &= at(i) == b'0';
                        octal &= at(i) <= b'7';
                        i += 1;
                    }
                    match at(i) {
                        b'.' => fraction = true,
                        b'e' | b'E' => exponent = true,
                        _ if octal && !zeros => {
                            let digits = &src[start + 1..i];
                            let msg = format!("obsolete form of octal literal; use 0o{digits}");
                            return Err(self.fail(i, msg));
                        }
                        _ => {}
                    }
                }
            }
        } else {
            while at(i).is_ascii_digit() {
                i += 1;
            }
            match at(i) {
                b'.' => fraction = true,
                b'e' | b'E' => exponent = true,
                _ => {}
            }
        }
        if fraction {
            i += 1; // the '.'
            while at(i).is_ascii_digit() {
                i += 1;
            }
            exponent = matches!(at(i), b'e' | b'E');
        }
        if exponent {
            i += 1; // the 'e'
            if matches!(at(i), b'+' | b'-') {
                i += 1;
                if !at(i).is_ascii_digit() {
                    return Err(self.fail(i, "invalid float literal"));
                }
            }
            while at(i).is_ascii_digit() {
                i += 1;
            }
        }
        let text = &src[start..i];
        let lit = if fraction || exponent {
            match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Literal::Float(f),
                _ => return Err(self.fail(i, "invalid float literal")),
            }
        } else {
            let (digits, radix) = match text.as_bytes() {
                [b'0', b'x' | b'X', ..] => (&text[2..], 16),
                [b'0', b'o' | b'O', ..] => (&text[2..], 8),
                [b'0', b'b' | b'B', ..] => (&text[2..], 2),
                _ => (text, 10),
            };
            if radix == 10 && text.len() > 1 && text.starts_with('0') {
                // starlark-go reads a decimal with a leading zero as Go
                // octal, which only all-zero digits survive here.
                if !text.bytes().all(|c| c == b'0') {
                    return Err(self.fail(start, "invalid int literal"));
                }
                Literal::Int(0)
            } else {
                match i64::from_str_radix(digits, radix) {
                    Ok(v) => Literal::Int(v),
                    // Only hex and decimal have an arbitrary-size fallback
                    // in starlark-go; big octal and binary are errors.
                    Err(_) if radix == 16 || radix == 10 => Literal::BigInt { digits, radix },
                    Err(_) => return Err(self.fail(start, "invalid int literal")),
                }
            }
        };
        let consumed = self.raw.span().end;
        self.raw.bump(i - consumed);
        Ok((Tok::Lit(lit), i))
    }

    /// Scans a string or bytes literal whose opening quote is at `quote`
    /// (the token, prefix included, starts at `start`).
    fn string(
        &mut self,
        start: usize,
        quote: usize,
        raw: bool,
        bytes: bool,
    ) -> Result<(Tok<'a>, usize), LexError> {
        let src = self.src;
        let b = src.as_bytes();
        let q = b[quote];
        let n = b.len();
        let triple = b.get(quote + 1) == Some(&q) && b.get(quote + 2) == Some(&q);
        // Whether the body needs decoding: an escape, or a carriage return
        // (which starlark-go reads as a newline).
        let mut special = false;
        let (body, end);
        if !triple {
            let mut i = quote + 1;
            loop {
                let Some(&c) = b.get(i) else {
                    return Err(self.fail(start, "unexpected EOF in string"));
                };
                if c == q {
                    break;
                }
                match c {
                    b'\n' | b'\r' => {
                        return Err(self.fail(start, "unexpected newline in string"));
                    }
                    b'\\' => {
                        special = true;
                        i += 1;
                        if i >= n {
                            return Err(self.fail(start, "unexpected EOF in string"));
                        }
                        // A CRLF after a backslash is one character.
                        if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                            i += 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            body = quote + 1..i;
            end = i + 1;
        } else {
            let mut i = quote + 3;
            let mut quotes = 0;
            loop {
                let Some(&c) = b.get(i) else {
                    return Err(self.fail(start, "unexpected EOF in string"));
                };
                i += 1;
                if c == q {
                    quotes += 1;
                    if quotes == 3 {
                        break;
                    }
                } else {
                    quotes = 0;
                }
                match c {
                    b'\r' => special = true,
                    b'\\' => {
                        special = true;
                        if i >= n {
                            return Err(self.fail(start, "unexpected EOF in string"));
                        }
                        if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                            i += 1;
                        }
                        i += 1;
                    }
                    _ => {}
                }
            }
            body = quote + 3..i - 3;
            end = i;
        }
        let text = &src[body];
        let lit = if !special {
            if bytes {
                Literal::Bytes(text.as_bytes())
            } else {
                Literal::String(text)
            }
        } else {
            self.decode(text, raw, bytes, quote)?
        };
        let consumed = self.raw.span().end;
        self.raw.bump(end - consumed);
        Ok((Tok::Lit(lit), end))
    }

    /// Decodes the body of a literal that has escapes or carriage returns.
    /// Errors are reported at the opening quote, as starlark-go does.
    fn decode(
        &mut self,
        text: &'a str,
        raw: bool,
        bytes: bool,
        quote: usize,
    ) -> Result<Literal<'a>, LexError> {
        let q = text.as_bytes();
        let n = q.len();
        let mut out = BVec::with_capacity_in(n, self.arena);
        let mut j = 0;
        while j < n {
            let c = q[j];
            if c == b'\r' {
                out.push(b'\n');
                j += if q.get(j + 1) == Some(&b'\n') { 2 } else { 1 };
                continue;
            }
            if c != b'\\' || raw {
                // Copy the run up to the next special byte in one go.
                let run = q[j..]
                    .iter()
                    .position(|&b| b == b'\r' || (b == b'\\' && !raw))
                    .map_or(n, |k| j + k.max(1));
                out.extend_from_slice(&q[j..run]);
                j = run;
                continue;
            }
            let Some(&e) = q.get(j + 1) else {
                return Err(self.fail(quote, "truncated escape sequence \\"));
            };
            match e {
                b'\n' => j += 2,
                b'\r' => j += if q.get(j + 2) == Some(&b'\n') { 3 } else { 2 },
                b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'\\' | b'\'' | b'"' => {
                    out.push(match e {
                        b'a' => 0x07,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'v' => 0x0b,
                        other => other,
                    });
                    j += 2;
                }
                b'0'..=b'7' => {
                    let mut v = u32::from(e - b'0');
                    j += 2;
                    for _ in 1..3 {
                        match q.get(j) {
                            Some(&d @ b'0'..=b'7') => {
                                v = v * 8 + u32::from(d - b'0');
                                j += 1;
                            }
                            _ => break,
                        }
                    }
                    if !bytes && v > 127 {
                        let msg = format!(
                            "non-ASCII octal escape \\{v:o} (use \\u{v:04X} for the UTF-8 encoding of U+{v:04X})"
                        );
                        return Err(self.fail(quote, msg));
                    }
                    if v >= 256 {
                        return Err(self.fail(quote, format!("invalid escape sequence \\{v:03o}")));
                    }
                    out.push(v as u8);
                }
                b'x' => {
                    if n - j < 4 {
                        let msg = format!("truncated escape sequence {}", &text[j..]);
                        return Err(self.fail(quote, msg));
                    }
                    let seq = String::from_utf8_lossy(&q[j..j + 4]);
                    let Some(v) = parse_hex(&q[j + 2..j + 4]) else {
                        return Err(self.fail(quote, format!("invalid escape sequence {seq}")));
                    };
                    if !bytes && v > 127 {
                        let msg = format!(
                            "non-ASCII hex escape {seq} (use \\u{v:04X} for the UTF-8 encoding of U+{v:04X})"
                        );
                        return Err(self.fail(quote, msg));
                    }
                    out.push(v as u8);
                    j += 4;
                }
                b'u' | b'U' => {
                    let size = if e == b'u' { 6 } else { 10 };
                    if n - j < size {
                        let msg = format!("truncated escape sequence {}", &text[j..]);
                        return Err(self.fail(quote, msg));
                    }
                    let seq = String::from_utf8_lossy(&q[j..j + size]);
                    let Some(v) = parse_hex(&q[j + 2..j + size]) else {
                        return Err(self.fail(quote, format!("invalid escape sequence {seq}")));
                    };
                    if v > 0x10FFFF {
                        let msg = format!("code point out of range: {seq} (max \\U{v:08x})");
                        return Err(self.fail(quote, msg));
                    }
                    let Some(ch) = char::from_u32(v) else {
                        let msg = format!("invalid Unicode code point U+{v:04X}");
                        return Err(self.fail(quote, msg));
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    j += size;
                }
                other => {
                    // Go formats the byte with %c, i.e. as a Latin-1 rune.
                    let msg = format!("invalid escape sequence \\{}", char::from(other));
                    return Err(self.fail(quote, msg));
                }
            }
        }
        let decoded = out.into_bump_slice();
        if bytes {
            return Ok(Literal::Bytes(decoded));
        }
        match std::str::from_utf8(decoded) {
            Ok(s) => Ok(Literal::String(s)),
            // Unreachable for string literals (escapes above 127 are
            // rejected), but never trust that with a panic.
            Err(_) => Err(self.fail(quote, "invalid UTF-8 in string literal")),
        }
    }
}

impl<'a, const CONTEXT: bool> Iterator for Lexer<'a, CONTEXT> {
    type Item = Result<Spanned<'a>, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_token()
    }
}

/// Parses 2 to 8 hex digits (no sign, no underscores, like Go's
/// `strconv.ParseUint(s, 16, 0)` on such input).
fn parse_hex(digits: &[u8]) -> Option<u32> {
    let mut v: u32 = 0;
    for &d in digits {
        let x = (d as char).to_digit(16)?;
        v = v.checked_mul(16)?.checked_add(x)?;
    }
    Some(v)
}

/// Quotes a character the way Go's `%q` verb does for a rune: printable
/// characters as themselves, others as `\xHH`, `\uHHHH` or `\UHHHHHHHH`.
fn quote_rune(c: char) -> String {
    let escaped = match c {
        '\x07' => "\\a".to_string(),
        '\x08' => "\\b".to_string(),
        '\x0c' => "\\f".to_string(),
        '\n' => "\\n".to_string(),
        '\r' => "\\r".to_string(),
        '\t' => "\\t".to_string(),
        '\x0b' => "\\v".to_string(),
        '\\' => "\\\\".to_string(),
        '\'' => "\\'".to_string(),
        c if is_printable(c) => c.to_string(),
        c if (c as u32) < 0x80 => format!("\\x{:02x}", c as u32),
        c if (c as u32) < 0x10000 => format!("\\u{:04x}", c as u32),
        c => format!("\\U{:08x}", c as u32),
    };
    format!("'{escaped}'")
}

/// An approximation of Go's `unicode.IsPrint` for characters that can
/// reach the "unexpected input character" error: controls, separators
/// other than the ASCII space, format characters, private-use characters
/// and non-characters are not printable.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    if c.is_control() {
        return false;
    }
    let separator = matches!(
        u,
        0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000
    );
    let format = matches!(
        u,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    );
    let private = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    let nonchar = (u & 0xFFFE) == 0xFFFE || (0xFDD0..=0xFDEF).contains(&u);
    !(separator || format || private || nonchar)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything a lexer hands out, errors included.
    fn tokens<const C: bool>(lexer: Lexer<'_, C>) -> Vec<Result<String, LexError>> {
        lexer
            .map(|r| r.map(|(start, tok, end)| format!("{start} {tok:?} {end}")))
            .collect()
    }

    /// The replay after a syntax error relies on both lexers handing out
    /// the same tokens: checked on every golden program.
    #[test]
    fn the_context_lexer_hands_out_the_same_tokens() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/lang");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).expect("golden programs") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|e| e != "star") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("program");
            let Ok(src) = std::str::from_utf8(&bytes) else {
                continue;
            };
            let arena = Bump::new();
            let plain = tokens(Lexer::new(&arena, src));
            let context = tokens(Lexer::with_context(&arena, src));
            assert_eq!(plain, context, "{}", path.display());
            checked += 1;
        }
        assert!(checked > 250, "only {checked} programs");
    }

    #[test]
    fn context_is_kept_only_by_the_context_lexer() {
        let arena = Bump::new();
        let src = "def f(a):\n    return g(a[1], {2: 3} if a else x)\n";
        let mut plain = Lexer::new(&arena, src);
        let mut context = Lexer::with_context(&arena, src);
        // Up to the `{`, read inside the call's parentheses.
        for _ in 0..17 {
            plain.next();
            context.next();
        }
        assert_eq!(plain.emitted(), 17);
        assert_eq!(context.emitted(), 17);
        assert!(plain.recent().iter().all(Option::is_none));
        assert!(matches!(context.recent()[0], Some((_, Tok::LBrace, _))));
        assert!(matches!(context.recent()[1], Some((_, Tok::Comma, _))));
        assert_eq!(context.ctx, Some(Bracket::Call));
        assert_eq!(plain.ctx, None);
        // The `if` comes later, inside the call (depth 1).
        for _ in 0..5 {
            context.next();
        }
        assert!(matches!(context.recent()[0], Some((_, Tok::If, _))));
        assert_eq!(context.last_if(1), Some(src.find(" if ").unwrap_or(0) + 1));
    }
}
