//! The fixed language surface: the universe's names, the members of the
//! `json` and `math` modules, and the block quoted in the README are all
//! exactly the three lines of the "Language surface" section of the MCP
//! tool reference (`docs/architecture.md`, section 11), kept verbatim in
//! `vm/tests/fixtures/language_surface.txt`.

use super::{json, math, ModuleDef, UNIVERSE_NAMES};

const SURFACE: &str = include_str!("../../tests/fixtures/language_surface.txt");

/// The comma-separated names after `LABEL: ` on the fixture's line.
fn line(label: &str) -> Vec<&'static str> {
    let prefix = format!("{label}: ");
    let text = SURFACE
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no `{label}:` line in the fixture"));
    text.split(", ").collect()
}

#[test]
fn fixture_is_the_three_surface_lines() {
    let labels: Vec<&str> = SURFACE
        .lines()
        .map(|l| l.split(": ").next().unwrap_or(""))
        .collect();
    assert_eq!(labels, ["top-level", "json", "math"]);
    assert!(SURFACE.ends_with('\n') && !SURFACE.ends_with("\n\n"));
}

#[test]
fn universe_names_are_the_top_level_line() {
    // The universe's values are declared beside these names, in one list.
    assert_eq!(UNIVERSE_NAMES.to_vec(), line("top-level"));
}

#[test]
fn module_members_are_the_json_and_math_lines() {
    let members = |m: &ModuleDef| m.members.iter().map(|(n, _)| *n).collect::<Vec<_>>();
    assert_eq!(json::MODULE.name, "json");
    assert_eq!(members(&json::MODULE), line("json"));
    assert_eq!(math::MODULE.name, "math");
    assert_eq!(members(&math::MODULE), line("math"));
}

#[test]
fn readme_quotes_the_surface_block() {
    let readme = include_str!("../../../README.md");
    let fenced = "## Language surface\n\n";
    let at = readme
        .find(fenced)
        .expect("README has a `## Language surface` section");
    let section = &readme[at..];
    let block = format!("```text\n{SURFACE}```\n");
    assert!(
        section.contains(&block),
        "README's Language surface section does not quote the fixture verbatim"
    );
}
