//! Fuzzes the scanner alone: arbitrary bytes through UTF-8 validation and
//! the lexer (layout, literals, escapes, nesting bound) must never panic,
//! every token's span must lie inside the source, in order, and an error
//! must end the stream at a position inside the source.
#![no_main]

use codemode_lang::{source_from_bytes, Lexer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = source_from_bytes(data) else {
        return;
    };
    let arena = bumpalo::Bump::new();
    let mut last_start = 0;
    let mut tokens = Lexer::new(&arena, src);
    for item in tokens.by_ref() {
        match item {
            Ok((start, _tok, end)) => {
                assert!(start <= end && end <= src.len(), "span {start}..{end}");
                assert!(
                    start >= last_start,
                    "token at {start} after one at {last_start}"
                );
                last_start = start;
            }
            Err(e) => {
                assert!(e.pos <= src.len(), "error at {} past the end", e.pos);
                assert!(!e.message.is_empty());
                break;
            }
        }
    }
    assert!(tokens.next().is_none(), "tokens after the end or an error");
});
