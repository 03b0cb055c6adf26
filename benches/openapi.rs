//! OpenAPI import and call benchmarks.
//!
//! `openapi/import_github`: importing GitHub's REST description (the
//! `api.github.com.json` of `@octokit/openapi`, named by
//! `CODEMODE_GITHUB_OPENAPI`; skipped without it) as the binary does at
//! start — parse, checks, operations, capabilities — and building the
//! catalog over them (target ≤ 1 s).
//!
//! `openapi/round_trip_raw` and `openapi/call_via_capability`: one GET of a
//! small JSON object from a loopback HTTP server started here, first with
//! a bare reqwest client, then as a capability call inside an execution (a
//! program making 100 calls; per call). The difference is the per-call
//! overhead of the import: binding, authorization, writing the request,
//! reading and conforming the answer (target ≤ 50 µs).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use codemode::catalog::{CodeMode, Config, ExecuteOptions, Subject};
use codemode::server::OpenApiConfig;
use codemode::server::{catalog_sources, collect_openapi, load_openapi, load_openapi_text};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::{Duration, Instant};

const CALLS: u64 = 100;

const SPEC: &str = r#"{
  "openapi": "3.1.0",
  "info": {"title": "bench", "version": "1"},
  "paths": {
    "/items/{itemId}": {
      "get": {
        "operationId": "items/get",
        "parameters": [
          {"name": "itemId", "in": "path", "required": true, "schema": {"type": "integer"}},
          {"name": "fields", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}}
        ],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
          "type": "object", "required": ["id", "name"],
          "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}
        }}}}}
      }
    }
  }
}"#;

const BODY: &str = r#"{"id": 7, "name": "widget", "tags": ["a", "b"]}"#;

fn import_github(c: &mut Criterion) {
    let Ok(path) = std::env::var("CODEMODE_GITHUB_OPENAPI") else {
        eprintln!(
            "openapi/import_github skipped: set CODEMODE_GITHUB_OPENAPI to @octokit/openapi's generated/api.github.com.json"
        );
        return;
    };
    let text = std::fs::read_to_string(&path).expect("read the description");
    let source = collect_openapi(
        &[OpenApiConfig {
            name: "github".into(),
            spec: path,
            ..OpenApiConfig::default()
        }],
        &[],
        &|_| None,
    )
    .expect("valid source")
    .remove(0);
    let mut group = c.benchmark_group("openapi");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("import_github", |b| {
        b.iter(|| {
            let imported = load_openapi_text(&source, &text, 1 << 20).expect("imports");
            let catalog = codemode::catalog::Catalog::builder()
                .capabilities(imported.into_iter().map(|i| i.capability))
                .build()
                .expect("builds");
            black_box(catalog.len())
        })
    });
    group.finish();
}

fn round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let app = axum::Router::new().fallback(|| async {
        (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            BODY,
        )
    });
    runtime.spawn(async move { axum::serve(listener, app).await });
    let base = format!("http://127.0.0.1:{port}");

    let client = reqwest::Client::new();
    let url = format!("{base}/items/7?fields=name&fields=tags");
    let mut group = c.benchmark_group("openapi");
    group.bench_function("round_trip_raw", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let r = client.get(&url).send().await.expect("sent");
                black_box(r.bytes().await.expect("body"))
            })
        })
    });

    let spec = std::env::temp_dir().join(format!("codemode-bench-{}.json", std::process::id()));
    std::fs::write(&spec, SPEC).expect("write spec");
    let source = collect_openapi(
        &[OpenApiConfig {
            name: "shop".into(),
            spec: spec.to_string_lossy().into_owned(),
            base_url: Some(base),
            ..OpenApiConfig::default()
        }],
        &[],
        &|_| None,
    )
    .expect("valid source");
    let config = Config::default();
    let imported = runtime
        .block_on(load_openapi(&source, config.limits.max_value_bytes, []))
        .expect("imported");
    let _ = std::fs::remove_file(&spec);
    let mut parts = catalog_sources(&[], &[]).expect("sources");
    parts
        .capabilities
        .extend(imported.into_iter().map(|i| i.capability));
    let catalog = parts.build_with([]).expect("catalog");
    let service = CodeMode::with_config(catalog, parts.policy, config);
    let program = format!(
        "def main():\n    n = 0\n    for i in range({CALLS}):\n        n += len(shop.items.get(item_id = i, fields = [\"name\", \"tags\"])[\"tags\"])\n    return n\n"
    );
    let subject = Subject::new("bench");
    group.bench_function("call_via_capability", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                let out = runtime
                    .block_on(service.execute(&subject, &program, ExecuteOptions::default()))
                    .expect("ran");
                black_box(out);
            }
            start.elapsed() / CALLS as u32
        })
    });
    group.finish();
}

criterion_group!(benches, import_github, round_trip);
criterion_main!(benches);
