//! Fuzzes the front end: arbitrary bytes through UTF-8 validation, the
//! lexer, the parser and the resolver must never panic, the nesting bound
//! must keep them off the stack limit, and every diagnostic must render.
#![no_main]

use codemode_lang::{check, source_from_bytes, Names};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = match source_from_bytes(data) {
        Ok(src) => src,
        Err(d) => {
            assert!(d.to_string().contains("invalid UTF-8"), "{d}");
            return;
        }
    };
    let arena = bumpalo::Bump::new();
    let names = Names {
        predeclared: &["records", "conformance"],
        universal: codemode_vm::UNIVERSE_NAMES,
    };
    if let Err(d) = check(&arena, src, &names) {
        // Rendering must work for every position the front end reports.
        let text = d.render(src);
        assert!(text.starts_with("<codemode>:"), "{text}");
    }
});
