//! Front-end throughput: parsing, and parsing plus resolving, a ~1 MB
//! program of realistic Starlark (defs with loops, branches, comprehensions,
//! closures, dict/list displays, calls and string literals), each iteration
//! in a fresh arena as `execute` does. Reported in bytes per second; the
//! target is at least 50 MB/s for parse + resolve.
//!
//! Run with `cargo bench --bench parse`.

use bumpalo::Bump;
use codemode_lang::{check, parse, Names};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::fmt::Write;
use std::hint::black_box;
use std::time::Duration;

/// The builtins of the language surface, as the VM defines them.
const UNIVERSE: &[&str] = codemode::vm::builtins::UNIVERSE_NAMES;

/// One block of globals and functions, varied by `i` so that names,
/// literals and shapes differ across the program.
fn unit(out: &mut String, i: usize) {
    let limit = i % 97;
    let _ = write!(
        out,
        r#"LIMIT_{i} = {limit}
NAMES_{i} = ["alpha", "beta", 'gamma', "delta-{i}", """multi
line {i}"""]

def summarise_{i}(items, limit = LIMIT_{i}, *args, scale = 1.5, **kwargs):
    """Summarise the records of batch {i}."""
    total = 0
    seen = {{}}
    for index, item in enumerate(items):
        if index >= limit:
            break
        elif item == None:
            continue
        key = "k%d" % index
        seen[key] = seen.get(key, 0) + item * 2 - (index // 3) % 7
        total += item
    pairs = [(k, v) for k, v in sorted(seen.items()) if v > 1]
    lookup = {{name: len(name) for name in NAMES_{i} if name.startswith("a") or name.endswith("a")}}
    grow = lambda x, factor = scale: x * factor
    def inner(n):
        return [grow(v) for _, v in pairs[:n]] + [total, -limit, ~{i}]
    result = {{
        "id": {i},
        "total": total,
        "pairs": pairs,
        "lookup": lookup,
        "values": inner(len(pairs)),
        "label": "record-" + str({i}) + 'x\n',
        "flags": [True, False, None, -1, 0x1F, 3.25e-2, b"raw\x00"],
    }}
    return result if total > 0 else dict(result, empty = True, tail = args[1:] if args else ())

def check_{i}(rows):
    ok = [r for r in rows if type(r) == "dict" and r.get("id") != None]
    names = sorted([str(r["id"]) for r in ok], reverse = True)
    return {{"count": len(ok), "names": ",".join(names), "first": names[0] if names else None}}

"#
    );
}

/// A program of at least `bytes` bytes with a `main`.
fn program(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 4096);
    let mut i = 0;
    while out.len() < bytes {
        unit(&mut out, i);
        i += 1;
    }
    out.push_str("def main():\n    return check_0([summarise_0([1, 2, 3])])\n");
    out
}

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
