//! Tokens: the raw tokens logos recognises ([`Raw`]) and the tokens the
//! lexer hands to the lalrpop parser ([`Tok`]).
//!
//! Logos does the byte-level work (identifiers, keywords, punctuation,
//! skipping blanks, comments and backslash-newline continuations). String
//! and number literals are only *started* by logos: their bodies follow
//! starlark-go's scanner rules, error positions included, so
//! [`crate::lexer`] scans them by hand. Layout tokens (NEWLINE, INDENT,
//! OUTDENT) are synthesised by the lexer from [`Raw::Newline`] and the
//! indentation it measures at each line start.

use crate::ast::Literal;
use logos::Logos;

/// The words the scanner does not take as identifiers: Starlark's keywords
/// and the Python keywords starlark-go reserves (`assert`, `async` and
/// `await` are identifiers there). Names made for programs — capability
/// segments, identifiers of upstream tools — must not be one of them.
pub const KEYWORDS: &[&str] = &[
    "and", "as", "break", "class", "continue", "def", "del", "elif", "else", "except", "finally",
    "for", "from", "global", "if", "import", "in", "is", "lambda", "load", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield",
];

/// A raw token as recognised by logos. Anything logos cannot match is an
/// "unexpected input character" error of the lexer.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t]+")]
// A comment runs to the end of its line: the greedy class is bounded by it.
#[logos(skip(r"#[^\r\n]*", allow_greedy = true))]
#[logos(skip r"\\(\r\n|\r|\n)")]
pub(crate) enum Raw {
    /// `\n`, `\r\n` or a lone `\r` (starlark-go reads all three as one
    /// newline).
    #[regex(r"\r\n|\r|\n")]
    Newline,
    /// Go's `unicode.IsLetter` or `_`, then also ASCII digits.
    #[regex(r"[\p{L}_][\p{L}_0-9]*")]
    Ident,
    /// The first digit of a number; the lexer scans the rest.
    #[regex(r"[0-9]")]
    Number,
    /// `.` followed by a digit: a float such as `.5`.
    #[regex(r"\.[0-9]")]
    DotNumber,
    /// The opening quote of a string, with its prefix; the lexer scans the
    /// body.
    #[token("'")]
    #[token("\"")]
    Quote,
    #[token("r'")]
    #[token("r\"")]
    PrefixRQuote,
    #[token("b'")]
    #[token("b\"")]
    BytesQuote,
    #[token("rb'")]
    #[token("rb\"")]
    PrefixRbQuote,
    /// A backslash not followed by a newline.
    #[token("\\")]
    Backslash,

    #[token("and")]
    And,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("def")]
    Def,
    #[token("elif")]
    Elif,
    #[token("else")]
    Else,
    #[token("for")]
    For,
    #[token("if")]
    If,
    #[token("in")]
    In,
    #[token("lambda")]
    Lambda,
    #[token("load")]
    Load,
    #[token("not")]
    Not,
    #[token("or")]
    Or,
    #[token("pass")]
    Pass,
    #[token("return")]
    Return,
    #[token("while")]
    While,
    /// Python keywords that starlark-go reserves: its scanner turns them
    /// into an "illegal token". (`assert`, `async` and `await` are plain
    /// identifiers there.)
    #[token("as")]
    #[token("class")]
    #[token("del")]
    #[token("except")]
    #[token("finally")]
    #[token("from")]
    #[token("global")]
    #[token("import")]
    #[token("is")]
    #[token("nonlocal")]
    #[token("raise")]
    #[token("try")]
    #[token("with")]
    #[token("yield")]
    Reserved,

    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("//")]
    SlashSlash,
    #[token("%")]
    Percent,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("<<")]
    LtLt,
    #[token(">>")]
    GtGt,
    #[token("~")]
    Tilde,
    #[token(".")]
    Dot,
    #[token(",")]
    Comma,
    #[token("=")]
    Eq,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBrack,
    #[token("]")]
    RBrack,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("<=")]
    Le,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("//=")]
    SlashSlashEq,
    #[token("%=")]
    PercentEq,
    #[token("&=")]
    AmpEq,
    #[token("|=")]
    PipeEq,
    #[token("^=")]
    CaretEq,
    #[token("<<=")]
    LtLtEq,
    #[token(">>=")]
    GtGtEq,
    #[token("**")]
    StarStar,
}

/// A token handed to the parser. Positions travel beside it in the
/// lalrpop triple `(start, Tok, end)` as byte offsets.
#[derive(Clone, Copy, Debug)]
pub enum Tok<'a> {
    /// The end of a logical line.
    Newline,
    /// The end of input where starlark-go's scanner returns EOF directly
    /// (no unfinished indentation): it ends a statement like a newline but
    /// is reported as "end of file".
    EofNewline,
    Indent,
    Outdent,
    /// An identifier, borrowed from the source.
    Ident(&'a str),
    /// An int, float, string or bytes literal, decoded.
    Lit(Literal<'a>),
    /// A reserved Python keyword (`class`, `import`, ...), borrowed from
    /// the source.
    Illegal(&'a str),

    And,
    Break,
    Continue,
    Def,
    Elif,
    Else,
    For,
    If,
    In,
    Lambda,
    Load,
    Not,
    Or,
    Pass,
    Return,
    While,

    Plus,
    Minus,
    Star,
    Slash,
    SlashSlash,
    Percent,
    Amp,
    Pipe,
    Caret,
    LtLt,
    GtGt,
    Tilde,
    Dot,
    Comma,
    Eq,
    Semi,
    Colon,
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Lt,
    Gt,
    Ge,
    Le,
    EqEq,
    Ne,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    SlashSlashEq,
    PercentEq,
    AmpEq,
    PipeEq,
    CaretEq,
    LtLtEq,
    GtGtEq,
    StarStar,
}

impl Tok<'_> {
    /// The token as starlark-go names it in "got X, want Y" messages
    /// (its `%#v` form: punctuation quoted, keywords bare).
    pub fn describe(&self) -> &'static str {
        match self {
            Tok::Newline => "newline",
            Tok::EofNewline => "end of file",
            Tok::Indent => "indent",
            Tok::Outdent => "outdent",
            Tok::Ident(_) => "identifier",
            Tok::Lit(Literal::Int(_)) | Tok::Lit(Literal::BigInt { .. }) => "int literal",
            Tok::Lit(Literal::Float(_)) => "float literal",
            Tok::Lit(Literal::String(_)) => "string literal",
            // starlark-go's token table has no name for BYTES.
            Tok::Lit(Literal::Bytes(_)) => "",
            Tok::Illegal(_) => "illegal token",
            Tok::And => "and",
            Tok::Break => "break",
            Tok::Continue => "continue",
            Tok::Def => "def",
            Tok::Elif => "elif",
            Tok::Else => "else",
            Tok::For => "for",
            Tok::If => "if",
            Tok::In => "in",
            Tok::Lambda => "lambda",
            Tok::Load => "load",
            Tok::Not => "not",
            Tok::Or => "or",
            Tok::Pass => "pass",
            Tok::Return => "return",
            Tok::While => "while",
            Tok::Plus => "'+'",
            Tok::Minus => "'-'",
            Tok::Star => "'*'",
            Tok::Slash => "'/'",
            Tok::SlashSlash => "'//'",
            Tok::Percent => "'%'",
            Tok::Amp => "'&'",
            Tok::Pipe => "'|'",
            Tok::Caret => "'^'",
            Tok::LtLt => "'<<'",
            Tok::GtGt => "'>>'",
            Tok::Tilde => "'~'",
            Tok::Dot => "'.'",
            Tok::Comma => "','",
            Tok::Eq => "'='",
            Tok::Semi => "';'",
            Tok::Colon => "':'",
            Tok::LParen => "'('",
            Tok::RParen => "')'",
            Tok::LBrack => "'['",
            Tok::RBrack => "']'",
            Tok::LBrace => "'{'",
            Tok::RBrace => "'}'",
            Tok::Lt => "'<'",
            Tok::Gt => "'>'",
            Tok::Ge => "'>='",
            Tok::Le => "'<='",
            Tok::EqEq => "'=='",
            Tok::Ne => "'!='",
            Tok::PlusEq => "'+='",
            Tok::MinusEq => "'-='",
            Tok::StarEq => "'*='",
            Tok::SlashEq => "'/='",
            Tok::SlashSlashEq => "'//='",
            Tok::PercentEq => "'%='",
            Tok::AmpEq => "'&='",
            Tok::PipeEq => "'|='",
            Tok::CaretEq => "'^='",
            Tok::LtLtEq => "'<<='",
            Tok::GtGtEq => "'>>='",
            Tok::StarStar => "'**'",
        }
    }

    /// Whether a `(` or `[` after this token opens a call or an index
    /// rather than a group or a list.
    pub(crate) fn ends_operand(&self) -> bool {
        matches!(
            self,
            Tok::Ident(_) | Tok::Lit(_) | Tok::RParen | Tok::RBrack | Tok::RBrace
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{Raw, KEYWORDS};
    use logos::Logos;

    fn whole_token(word: &str) -> Option<Raw> {
        let mut lexer = Raw::lexer(word);
        let token = lexer.next()?.ok()?;
        (lexer.span() == (0..word.len()) && lexer.next().is_none()).then_some(token)
    }

    #[test]
    fn keywords_are_the_words_that_are_not_identifiers() {
        for word in KEYWORDS {
            let token = whole_token(word);
            assert!(token.is_some() && token != Some(Raw::Ident), "{word}");
        }
        for word in [
            "assert", "async", "await", "print", "set", "True", "None", "lambda_",
        ] {
            assert_eq!(whole_token(word), Some(Raw::Ident), "{word}");
        }
    }
}
