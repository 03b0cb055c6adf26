//! Search latency over the GitHub REST manifest, robust to a busy machine:
//! for each query, the minimum and median of many timed runs, and the same
//! for the index build. Run with
//! `cargo run -p codemode-catalog --profile bench --example search_latency`.

use codemode_catalog::{Catalog, Manifest};
use std::hint::black_box;
use std::time::{Duration, Instant};

const QUERIES: &[&str] = &[
    "create an issue",
    "list pull requests",
    "get repository content",
    "list workflow runs for a repository",
    "add labels to an issue",
    "search code",
    "delete a release asset for the authenticated user",
    "github.repos.get",
    "github",
];

fn stats(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[0], v[v.len() / 2])
}

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/github-rest-catalog.json"
    );
    let text = std::fs::read_to_string(path).expect("the GitHub manifest");
    let manifest = Manifest::from_json(&text).expect("valid manifest");
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
    for q in QUERIES {
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
