//! Search latency over the GitHub REST manifest, robust to a busy machine:
//! for each query, the minimum and median of many timed runs, and the same
//! for the index build. Run with
//! `CODEMODE_GITHUB_MANIFEST=PATH cargo run -p codemode-catalog --profile bench --example search_latency`.

use codemode_catalog::Catalog;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../tests/github_manifest/mod.rs"]
mod github_manifest;

fn stats(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[0], v[v.len() / 2])
}

fn main() {
    let Some(manifest) = github_manifest::manifest("search_latency") else {
        return;
    };
    let mut builds = Vec::new();
    for _ in 0..30 {
        let input = manifest.clone();
        let start = Instant::now();
        let catalog = Catalog::builder()
            .manifest(input)
            .build()
            .expect("buildable");
        builds.push(start.elapsed());
        drop(black_box(catalog));
    }
    let (min, median) = stats(builds);
    println!("build 1223: min {min:?} median {median:?}");
    let catalog = Catalog::builder()
        .manifest(manifest)
        .build()
        .expect("buildable");
    let mut medians = Vec::new();
    for q in github_manifest::AGENT_QUERIES {
        let mut runs = Vec::new();
        for _ in 0..3000 {
            let start = Instant::now();
            let r = catalog.search(black_box(q));
            runs.push(start.elapsed());
            drop(black_box(r));
        }
        let (min, median) = stats(runs);
        medians.push(median);
        println!("{q:?}: min {min:?} median {median:?}");
    }
    let (_, overall) = stats(medians);
    println!("median of query medians: {overall:?}");
}
