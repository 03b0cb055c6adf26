//! Builtin-library benchmarks: method-heavy loops, `sorted` with `key=`,
//! `%` formatting, and json encode/decode. The programs are in
//! `benches/programs/`; `benches/compare.py` runs the same work under
//! CPython (with `.py` twins where Starlark's json differs from Python's).

/// The allocator the `codemode` binary ships with, so that the figures are
/// the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use codemode::vm::{execute, Data, Host, HostCall, Limits};
use common::program;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

struct NoHost;

impl Host for NoHost {
    type Error = ();
    fn call(&self, _call: HostCall<'_>) -> Result<Data, ()> {
        Err(())
    }
}

fn builtins(c: &mut Criterion) {
    const N: u64 = 10_000;
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let mut group = c.benchmark_group("builtins");
    group.sample_size(20);
    group.throughput(Throughput::Elements(N));
    for name in ["methods", "sorted_key", "percent_format"] {
        let src = program(name, N);
        execute(&src, &[], &NoHost, &limits, None).expect(name);
        group.bench_with_input(BenchmarkId::from_parameter(name), &src, |b, src| {
            b.iter(|| execute(black_box(src), &[], &NoHost, &limits, None))
        });
    }
    group.finish();

    // json throughput in bytes of JSON text produced or consumed.
    let probe = "def main():\n    return len(json.encode([{\"id\": i, \"name\": \"item-\" + str(i), \"score\": i * 0.5, \"tags\": [\"a\", \"b\"]} for i in range(N)]))\n"
        .replace("range(N)", &format!("range({N})"));
    let Ok(Data::Int(bytes)) = execute(&probe, &[], &NoHost, &limits, None) else {
        panic!("json size probe failed");
    };
    let mut group = c.benchmark_group("json");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(bytes as u64));
    for name in ["json_encode", "json_decode"] {
        let src = program(name, N);
        execute(&src, &[], &NoHost, &limits, None).expect(name);
        group.bench_with_input(BenchmarkId::from_parameter(name), &src, |b, src| {
            b.iter(|| execute(black_box(src), &[], &NoHost, &limits, None))
        });
    }
    group.finish();
}

criterion_group!(benches, builtins);
criterion_main!(benches);
