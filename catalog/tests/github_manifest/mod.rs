//! The GitHub REST manifest (1,223 operations): the catalog at a real size
//! for the tests, benchmarks and examples that measure search and catalog
//! building. It is large and not part of the repository; its path comes
//! from the environment variable `CODEMODE_GITHUB_MANIFEST` (`.ci/run` sets
//! it when the manifest is available). Without the variable, every caller
//! skips and says so on stderr.
//!
//! One file, included by the catalog tests as a module and by
//! `catalog/examples/search_latency.rs`, `benches/search.rs` and
//! `benches/vm.rs` through `#[path]`.

#![allow(dead_code)] // each includer uses a part

use codemode_catalog::{Catalog, Manifest};
use std::io::Write;
use std::path::PathBuf;

/// The environment variable that names the manifest's path.
pub const VAR: &str = "CODEMODE_GITHUB_MANIFEST";

/// Typical agent queries, the ones the search benchmarks time.
pub const AGENT_QUERIES: &[&str] = &[
    "create an issue",
    "list pull requests",
    "get repository content",
    "list workflow runs for a repository",
    "add labels to an issue",
    "search code",
    "github.repos.get",
    "github",
    "repos",
    "get",
    "delete a release asset for the authenticated user",
];

/// The manifest's path, when the variable names one.
pub fn path() -> Option<PathBuf> {
    std::env::var_os(VAR)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// The manifest's text, or `None` (after saying so on stderr) when the
/// variable is not set; `what` names the caller in that line. A set
/// variable that names no readable file is an error, not a skip.
pub fn text(what: &str) -> Option<String> {
    let Some(path) = path() else {
        skipped(what);
        return None;
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => panic!("{VAR}={}: {e}", path.display()),
    }
}

/// The parsed manifest (see [`text`]).
pub fn manifest(what: &str) -> Option<Manifest> {
    text(what).map(|t| Manifest::from_json(&t).expect("the GitHub manifest is valid"))
}

/// A catalog of the manifest's 1,223 capabilities (see [`text`]).
pub fn catalog(what: &str) -> Option<Catalog> {
    manifest(what).map(|m| {
        Catalog::builder()
            .manifest(m)
            .build()
            .expect("the GitHub manifest builds")
    })
}

/// Says on stderr that `what` did not run. Written to the process's stderr
/// directly, so that the test harness's output capture does not hide it.
pub fn skipped(what: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipped {what}: set {VAR} to the path of the GitHub REST manifest to run it"
    );
}
