//! The README's example agent program, run through the built binary on the
//! `demo` catalog: it must print exactly the result the README shows, so
//! the documentation cannot drift from the code.

mod common;

/// The text between `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("README lacks {start:?}"))
        + start.len();
    let len = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("README lacks {end:?}"));
    &text[from..from + len]
}

#[test]
fn the_readme_agent_program_prints_the_documented_result() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("read README.md");
    let program = between(&readme, "```python\n", "```");
    let documented = between(&readme, "One `execute` call returns\n`", "`");
    let out = common::run_codemode(&["run", "--catalog", "demo", "-"], program, &[]);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).expect("utf-8"),
        format!("{documented}\n")
    );
}

#[test]
fn the_readme_openapi_program_is_the_example_the_e2e_script_runs() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("read README.md");
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/openapi/nudge.star"
    ))
    .expect("read nudge.star");
    let shown = between(&readme, "(`examples/openapi/nudge.star`;", "\n```\n");
    let (_, program) = shown.split_once("```python\n").expect("a python block");
    assert_eq!(format!("{program}\n"), example);
}
