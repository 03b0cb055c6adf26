//! Search benchmarks over the 1,223 GitHub REST operations of the manifest
//! that `CODEMODE_GITHUB_MANIFEST` names (skipped without it): index build
//! time, and the latency of typical agent queries (targets: build ≤ 50 ms,
//! median query ≤ 20 µs).

/// The allocator the `codemode` binary ships with, so that the figures are
/// the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use codemode::catalog::{Catalog, Manifest};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../catalog/tests/github_manifest/mod.rs"]
mod github_manifest;

fn build(manifest: Manifest) -> Catalog {
    Catalog::builder()
        .manifest(manifest)
        .build()
        .expect("buildable")
}

fn bench(c: &mut Criterion) {
    let Some(text) = github_manifest::text("the search benchmarks") else {
        return;
    };
    let manifest = Manifest::from_json(&text).expect("valid manifest");
    // Validation, shape mapping, signatures and the inverted index, from a
    // parsed manifest (JSON parsing is measured apart).
    // Only the build is timed: cloning the input and dropping the catalog
    // are not.
    c.bench_function("search/build_1223", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let input = manifest.clone();
                let start = Instant::now();
                let catalog = build(input);
                total += start.elapsed();
                drop(black_box(catalog));
            }
            total
        })
    });
    c.bench_function("search/parse_manifest", |b| {
        b.iter(|| Manifest::from_json(black_box(&text)))
    });
    let catalog = build(manifest);
    for q in github_manifest::AGENT_QUERIES {
        c.bench_with_input(BenchmarkId::new("search/query", q), q, |b, q| {
            b.iter(|| catalog.search(black_box(q)))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
