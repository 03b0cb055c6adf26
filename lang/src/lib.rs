//! codemode-lang: everything between Starlark source text and a resolved
//! syntax tree.
//!
//! [`parse`] runs the logos lexer (with Python-style indentation) and the
//! lalrpop parser, building an [`ast::Module`] in a caller-owned bumpalo
//! arena; [`resolve`] binds every identifier (local, cell, free, global,
//! predeclared, universal) and enforces the restrictions of starlark-go's
//! default file options. [`check`] does both. Every failure is a single
//! [`Diagnostic`] at the position starlark-go reports, with a [`Hint`]
//! when the program tried a Python construct the language lacks. The
//! [`Lexer`] is public on its own, so the scanner can be driven (and
//! fuzzed) alone.

pub mod ast;
mod diagnostic;
pub mod hash;
mod hint;
mod lexer;
mod parse;
mod prefetch;
mod resolve;
mod token;

pub use diagnostic::{Diagnostic, LineIndex, FILE_NAME};
pub use hint::{without_hint, Hint, MAX_HINT_BYTES};
pub use lexer::{LexError, Lexer};
pub use parse::parse;
pub use resolve::{nearest, resolve, Names};
pub use token::{Tok, KEYWORDS};

use bumpalo::Bump;

/// The deepest nesting of brackets, expressions and blocks the parser
/// accepts. It bounds every recursive walk over the tree.
pub const MAX_NESTING: usize = 200;

/// Parses and resolves `source`: the front end in one call.
pub fn check<'a>(
    arena: &'a Bump,
    source: &'a str,
    names: &Names<'_>,
) -> Result<&'a ast::Module<'a>, Diagnostic> {
    let module = parse(arena, source)?;
    resolve(arena, module, names)?;
    Ok(module)
}

/// Validates that raw program bytes are UTF-8 (NUL bytes are the lexer's
/// concern), reporting
/// the offset of the first offending byte.
pub fn source_from_bytes(bytes: &[u8]) -> Result<&str, Diagnostic> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => Err(Diagnostic::new(
            e.valid_up_to() as u32,
            "invalid UTF-8 encoding",
        )),
    }
}
