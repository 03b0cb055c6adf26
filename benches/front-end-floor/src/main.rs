//! How fast can a front end built on LALRPOP's generated (table-driven)
//! parser be on this machine? Side by side, in one run, on the generated
//! ~1 MB program of `benches/parse.rs`: our lexer alone, LALRPOP's driver
//! alone (the real grammar with every action emptied, on tokens lexed in
//! advance), the real parse (lexer + parser + AST) and parse + resolve.
//! Each figure is the best of `--runs` runs (default 10), wall clock.
//! `--file PATH` measures that program instead (a small program shows the
//! per-program floor that execute latency starts from).
//!
//! `cargo run --release --manifest-path benches/front-end-floor/Cargo.toml`

use bumpalo::Bump;
use codemode_lang::{check, parse, LexError, Lexer, Names};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../../common/front_end_program.rs"]
mod front_end_program;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, unused)]
    floor
);

fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// The value after `flag` on the command line.
fn option(flag: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != flag).nth(1)
}

fn main() {
    let runs = option("--runs").map_or(10, |n| n.parse().expect("--runs N"));
    let source = match option("--file") {
        Some(path) => std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        None => front_end_program::program(1 << 20),
    };
    let names = Names {
        predeclared: &["records"],
        universal: &[
            "None",
            "True",
            "False",
            "len",
            "str",
            "dict",
            "enumerate",
            "sorted",
            "type",
        ],
    };
    let arena = Bump::new();
    let tokens: Vec<_> = Lexer::new(&arena, &source)
        .collect::<Result<_, LexError>>()
        .expect("the program lexes");
    check(&arena, &source, &names).expect("the program resolves");
    let parser = floor::FileParser::new();

    let rows = [
        (
            "lexer (codemode_lang::Lexer)",
            best(runs, || {
                let arena = Bump::new();
                black_box(Lexer::new(&arena, &source).count());
            }),
        ),
        (
            "LALRPOP driver alone (empty actions, tokens lexed in advance)",
            best(runs, || {
                let r = parser.parse(tokens.iter().map(|&t| Ok::<_, LexError>(t)));
                assert!(r.is_ok());
            }),
        ),
        (
            "parse (lexer + parser + AST)",
            best(runs, || {
                let arena = Bump::new();
                black_box(parse(&arena, &source).is_ok());
            }),
        ),
        (
            "parse + resolve",
            best(runs, || {
                let arena = Bump::new();
                black_box(check(&arena, &source, &names).is_ok());
            }),
        ),
    ];
    let mb = source.len() as f64 / 1e6;
    println!(
        "{} bytes, {} tokens; best of {runs} runs; budget at 50 MB/s: {:.1} µs",
        source.len(),
        tokens.len(),
        mb / 50.0 * 1e6
    );
    println!("| stage | µs | MB/s | ns/token |");
    println!("|---|---:|---:|---:|");
    for (name, d) in rows {
        let s = d.as_secs_f64();
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} |",
            s * 1e6,
            mb / s,
            s * 1e9 / tokens.len() as f64
        );
    }
}
