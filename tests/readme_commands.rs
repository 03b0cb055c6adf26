//! Every `codemode` command line of README.md — in a code block (also as
//! `target/release/codemode ...` or after `cargo run ... --`) or inline —
//! is one the binary's real command-line parser accepts, so the README
//! cannot show a command that fails on its flags.

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use codemode::server::Cli;

/// The README's command lines: `(where, the line)`.
fn commands(readme: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut prose = String::new();
    let mut fenced = false;
    let mut lines = readme.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            prose.push('\n');
            continue;
        }
        if !fenced {
            prose.push_str(line);
            prose.push('\n');
            continue;
        }
        // A command continued over lines with `\`.
        let mut command = line.trim().to_string();
        while command.ends_with('\\') {
            command.pop();
            match lines.next() {
                Some((_, next)) => command.push_str(next.trim()),
                None => break,
            }
            prose.push('\n');
        }
        prose.push('\n');
        let args = if let Some(rest) = command.strip_prefix("target/release/codemode ") {
            Some(rest.to_string())
        } else if let Some(rest) = command.strip_prefix("codemode ") {
            Some(rest.to_string())
        } else if command.starts_with("cargo run ") {
            command.split_once(" -- ").map(|(_, rest)| rest.to_string())
        } else {
            None
        };
        if let Some(args) = args {
            found.push((format!("line {}", n + 1), format!("codemode {args}")));
        }
    }
    // Inline code spans, which may break across lines.
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 && span.starts_with("codemode ") {
            found.push((
                format!("inline `{span}`"),
                span.split_whitespace().collect::<Vec<_>>().join(" "),
            ));
        }
    }
    found
}

/// Why `line` is not a command the binary accepts, if it is not.
fn refused(line: &str, inline: bool) -> Option<String> {
    let Some(mut args) = shlex::split(line) else {
        return Some("unbalanced quotes".to_string());
    };
    // The command ends where the shell's next one begins.
    if let Some(end) = args
        .iter()
        .position(|a| ["|", "||", "&&", ";", "&", ">", "<"].contains(&a.as_str()))
    {
        args.truncate(end);
    }
    // Inline, `codemode run` names the command: it must be one.
    if inline && args.len() == 2 {
        return Cli::command()
            .find_subcommand(&args[1])
            .is_none()
            .then(|| format!("no command {:?}", args[1]));
    }
    match Cli::try_parse_from(&args) {
        Ok(_) => None,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => None,
        Err(e) => Some(e.to_string()),
    }
}

#[test]
fn every_readme_command_parses() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("read README.md");
    let commands = commands(&readme);
    // The README shows serving, the one-shot commands and a config file.
    for needed in [
        "codemode serve",
        "codemode search",
        "codemode run",
        "--config",
    ] {
        assert!(
            commands.iter().any(|(_, c)| c.contains(needed)),
            "no {needed:?} in {commands:#?}"
        );
    }
    let bad: Vec<String> = commands
        .iter()
        .filter_map(|(at, line)| {
            refused(line, at.starts_with("inline")).map(|e| format!("{at}: {line}\n{e}"))
        })
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

#[test]
fn a_misplaced_flag_is_caught() {
    let readme = "Run `codemode --config FILE serve`:\n\n```sh\ncodemode serve \\\n  --catalog demo \\\n  --bogus\ncodemode search x | jq .\n```\n";
    let commands = commands(readme);
    assert_eq!(commands.len(), 3, "{commands:?}");
    let refusals: Vec<bool> = commands
        .iter()
        .map(|(at, line)| refused(line, at.starts_with("inline")).is_some())
        .collect();
    assert_eq!(refusals, [true, false, true]);
}
