//! Interpreter benchmarks: hot loops per iteration, and execute latency of
//! a typical agent program (parse + resolve + compile + run + convert) with
//! three capability calls. The programs are in `benches/programs/`; the
//! same files run under CPython and starlark-go in `benches/compare.py`.

mod common;

use codemode::vm::{execute, Data, Host, HostCall, Limits};
use common::program;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

/// Answers the demo catalog's record calls with fixed data.
struct RecordsHost;

impl Host for RecordsHost {
    type Error = ();
    fn call(&self, call: HostCall<'_>) -> Result<Data, ()> {
        let item = |id: &str, active: bool, score: f64| {
            Data::Map(vec![
                ("id".into(), Data::Str(id.into())),
                ("active".into(), Data::Bool(active)),
                ("score".into(), Data::Float(score)),
            ])
        };
        Ok(match call.name {
            "records.status" => Data::Map(vec![
                ("count".into(), Data::Int(5)),
                ("version".into(), Data::Str("2026-11".into())),
            ]),
            _ => Data::Map(vec![(
                "items".into(),
                Data::List(vec![
                    item("alpha", true, 2.0),
                    item("beta", false, 1.0),
                    item("gamma", true, 3.5),
                ]),
            )]),
        })
    }
}

fn hot_loops(c: &mut Criterion) {
    const N: u64 = 100_000;
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let mut group = c.benchmark_group("hot_loop");
    group.throughput(Throughput::Elements(N));
    group.sample_size(20);
    for name in [
        "loop_arith",
        "calls",
        "closures",
        "list_append",
        "list_comprehension",
        "dict_set_get",
    ] {
        let src = program(name, N);
        // Fail loudly rather than time an error.
        execute(&src, &[], &RecordsHost, &limits, None).expect(name);
        group.bench_with_input(BenchmarkId::from_parameter(name), &src, |b, src| {
            b.iter(|| execute(black_box(src), &[], &RecordsHost, &limits, None))
        });
    }
    group.finish();
}

fn execute_latency(c: &mut Criterion) {
    let src = program("agent_20_lines", 0);
    let caps = ["records.lookup", "records.search", "records.status"];
    let limits = Limits::default();
    let r = execute(&src, &caps, &RecordsHost, &limits, None).expect("agent program");
    assert!(matches!(r, Data::Map(_)));
    c.bench_function("execute_agent_20_lines", |b| {
        b.iter(|| execute(black_box(&src), &caps, &RecordsHost, &limits, None))
    });
}

criterion_group!(benches, hot_loops, execute_latency);
criterion_main!(benches);
