//! Fuzzes the front end: arbitrary bytes through UTF-8 validation, the
//! lexer, the parser and the resolver must never panic, and the nesting
//! bound must keep them off the stack limit.
#![no_main]

use codemode_lang::{check, source_from_bytes, Names};
use libfuzzer_sys::fuzz_target;

const UNIVERSE: &[&str] = &[
    "False", "None", "True", "abs", "all", "any", "bool", "bytes", "chr", "dict", "dir",
    "enumerate", "fail", "float", "getattr", "hasattr", "hash", "int", "json", "len", "list",
    "math", "max", "min", "ord", "print", "range", "repr", "reversed", "sorted", "str", "sum",
    "tuple", "type", "zip",
];

fuzz_target!(|data: &[u8]| {
    let Ok(src) = source_from_bytes(data) else {
        return;
    };
    let arena = bumpalo::Bump::new();
    let names = Names {
        predeclared: &["records"],
        universal: UNIVERSE,
    };
    if let Err(d) = check(&arena, src, &names) {
        // Rendering must work for every position the front end reports.
        let _ = d.render(src);
    }
});
