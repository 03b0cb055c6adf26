//! Front-end throughput: parsing, and parsing plus resolving, a ~1 MB
//! program of realistic Starlark (defs with loops, branches, comprehensions,
//! closures, dict/list displays, calls and string literals), each iteration
//! in a fresh arena as `execute` does. Reported in bytes per second; the
//! target is at least 50 MB/s for parse + resolve.
//!
//! Run with `cargo bench --bench parse`.

/// The allocator the `codemode` binary ships with, so that the figures are
/// the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use bumpalo::Bump;
use codemode_lang::{check, parse, Names};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

#[path = "common/front_end_program.rs"]
mod front_end_program;
use front_end_program::program;

/// The builtins of the language surface, as the VM defines them.
const UNIVERSE: &[&str] = codemode::vm::UNIVERSE_NAMES;

fn front_end(c: &mut Criterion) {
    let source = program(1 << 20);
    let names = Names {
        predeclared: &[],
        universal: UNIVERSE,
    };
    // The benchmark means nothing if the program does not resolve.
    {
        let arena = Bump::new();
        if let Err(e) = check(&arena, &source, &names) {
            panic!("benchmark program rejected: {}", e.render(&source));
        }
    }

    let mut group = c.benchmark_group("front_end");
    group.throughput(Throughput::Bytes(source.len() as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("parse", |b| {
        b.iter(|| {
            let arena = Bump::new();
            let module = parse(&arena, black_box(&source)).map(|m| m.stmts.len());
            black_box(module.is_ok())
        })
    });
    group.bench_function("parse_resolve", |b| {
        b.iter(|| {
            let arena = Bump::new();
            let module = check(&arena, black_box(&source), &names).map(|m| m.stmts.len());
            black_box(module.is_ok())
        })
    });
    group.finish();
}

criterion_group!(benches, front_end);
criterion_main!(benches);
