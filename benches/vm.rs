//! Interpreter benchmarks: hot loops per iteration, and execute latency of
//! a typical agent program with three capability calls. The programs are in
//! `benches/programs/`; the same files run under starlark-go, starlark-rust
//! and CPython in `benches/compare.py`.
//!
//! `execute_agent_20_lines` is the latency the product promises: the
//! `CodeMode` service over the built-in `demo` catalog, in process, from
//! source text to the final JSON text (parse, resolve, compile, run, three
//! capability calls each bound, authorized and served by the demo handlers
//! on the runtime, result conversion, serialization).
//! `execute_agent_20_lines_vm` is the VM's share of it: `execute` with a
//! host that answers the same calls with the demo catalog's data directly.
//! `execute_agent_20_lines_github_catalog` is the first again with the
//! GitHub manifest's 1,223 capabilities loaded beside `demo`: the latency
//! must not grow with the size of the catalog (it runs when
//! `CODEMODE_GITHUB_MANIFEST` names the manifest). These run on a runtime
//! of two workers, as `codemode serve` has on two cores, where a step runs
//! on the thread that polls its execution while the other worker is free
//! (see `catalog/src/cpu.rs`). `execute_agent_20_lines_step_thread` is the
//! first on a runtime of one worker, which can spare none: every step is
//! handed to a step thread and back, as on a busy server.

/// The allocator the `codemode` binary ships with, so that the figures are
/// the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
#[path = "../catalog/tests/github_manifest/mod.rs"]
mod github_manifest;

use codemode::catalog::{ExecuteOptions, Subject};
use codemode::server::load_catalogs;
use codemode::vm::{execute, Data, Host, HostCall, Limits};
use common::program;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

/// Answers the agent program's record calls with what the demo catalog
/// returns for them.
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
        let active = call
            .args
            .iter()
            .any(|(k, v)| k == "active" && *v == Data::Bool(true));
        Ok(match call.name {
            "records.status" => Data::Map(vec![
                ("count".into(), Data::Int(8)),
                ("version".into(), Data::Str("2026-11-01".into())),
            ]),
            _ if active => Data::Map(vec![(
                "items".into(),
                Data::List(vec![
                    item("rec-001", true, 2.5),
                    item("rec-003", true, 1.5),
                    item("rec-004", true, 3.0),
                ]),
            )]),
            _ => Data::Map(vec![(
                "items".into(),
                Data::List(vec![
                    item("rec-002", false, 1.0),
                    item("rec-006", false, 4.0),
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

/// The agent program's result, as JSON text, on the demo catalog.
const AGENT_RESULT: &str = r#"{"count":3,"score":7.0,"ids":["rec-001","rec-003","rec-004"],"version":"2026-11-01","labels":["REC-001","REC-002","REC-003","REC-004","REC-006"]}"#;

fn execute_latency(c: &mut Criterion) {
    let src = program("agent_20_lines", 0);

    let runtime = |workers| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .expect("runtime")
    };
    let subject = Subject::new("bench");
    let demo = || vec!["demo".to_string()];
    let mut runs = vec![
        ("execute_agent_20_lines", demo(), runtime(2)),
        ("execute_agent_20_lines_step_thread", demo(), runtime(1)),
    ];
    match github_manifest::path() {
        Some(github) => runs.push((
            "execute_agent_20_lines_github_catalog",
            vec!["demo".to_string(), github.display().to_string()],
            runtime(2),
        )),
        None => github_manifest::skipped("execute_agent_20_lines_github_catalog"),
    }
    for (name, sources, runtime) in runs {
        let service = load_catalogs(&sources, &[], Default::default()).expect("catalogs");
        let run = |src: &str| -> String {
            let data = runtime
                .block_on(service.execute(&subject, src, ExecuteOptions::default()))
                .expect("agent program");
            serde_json::to_string(&data).expect("json")
        };
        // Fail loudly rather than time a wrong answer.
        assert_eq!(run(&src), AGENT_RESULT);
        c.bench_function(name, |b| b.iter(|| run(black_box(&src))));
    }

    let caps = ["records.lookup", "records.search", "records.status"];
    let limits = Limits::default();
    let run_vm = |src: &str| -> String {
        let data = execute(src, &caps, &RecordsHost, &limits, None).expect("agent program");
        serde_json::to_string(&data).expect("json")
    };
    assert_eq!(run_vm(&src), AGENT_RESULT);
    c.bench_function("execute_agent_20_lines_vm", |b| {
        b.iter(|| run_vm(black_box(&src)))
    });
}

criterion_group!(benches, hot_loops, execute_latency);
criterion_main!(benches);
