//! Upstream tool names as Starlark identifiers.
//!
//! MCP tool names are free-form (`read_file`, `getIssue`, `list-repos`,
//! `admin.users`); a capability segment must be a Starlark identifier.
//! [`identifier`] turns a tool name into snake case: humps of a camel-case
//! word split like search's tokenizer splits them (`getHTTPStatus` →
//! `get_http_status`), every run of characters other than ASCII letters and
//! digits becomes one `_`, a leading digit gets a leading `_`, and a keyword
//! gets a trailing `_`. [`assign`] gives every tool of one server its
//! segment, resolving collisions deterministically: a tool whose name is
//! already its identifier keeps it, the others follow in the order of
//! their original names, and a segment already taken gets the first free
//! suffix `_2`, `_3`, …. [`resolve`] is the same resolution over names
//! made some other way (an OpenAPI operation's dotted name, an argument
//! name), avoiding names reserved beforehand. The same rule names the
//! arguments of imported capabilities ([`argument`]): `max-count` is
//! passed as `max_count` and forwarded under its original name.

use codemode_vm::KEYWORDS;
use std::collections::HashSet;

/// The snake-case identifier of a tool name (`tool` for a name with no
/// letters or digits).
pub fn identifier(name: &str) -> String {
    identifier_or(name, "tool")
}

/// The snake-case identifier of an argument name (`arg` for a name with
/// no letters or digits).
pub fn argument(name: &str) -> String {
    identifier_or(name, "arg")
}

fn identifier_or(name: &str, empty: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            let hump = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower);
            if hump && !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str(empty);
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// The segment of each tool name, in the order given. Collisions are
/// resolved by the original names alone, so the result does not depend on
/// the order the server listed its tools in.
pub fn assign(names: &[&str]) -> Vec<String> {
    let bases: Vec<String> = names.iter().map(|n| identifier(n)).collect();
    resolve(names, bases, &mut HashSet::new())
}

/// Makes the `bases` (the names wanted for the `originals`, in the same
/// order) unique and different from every name already in `taken`, which
/// receives them: a base equal to its original keeps it first, the others
/// follow in the order of their originals, and a base already taken gets
/// the first free suffix `_2`, `_3`, ….
pub fn resolve(originals: &[&str], bases: Vec<String>, taken: &mut HashSet<String>) -> Vec<String> {
    let mut order: Vec<usize> = (0..originals.len()).collect();
    order.sort_by(|&a, &b| {
        let renamed = |i: usize| bases[i] != originals[i];
        (renamed(a), originals[a], a).cmp(&(renamed(b), originals[b], b))
    });
    let mut out = vec![String::new(); originals.len()];
    for i in order {
        let base = &bases[i];
        let mut name = base.clone();
        let mut n = 2u32;
        while taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        taken.insert(name.clone());
        out[i] = name;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_become_snake_case_identifiers() {
        let cases = [
            ("read_file", "read_file"),
            ("getIssue", "get_issue"),
            ("getHTTPStatus", "get_http_status"),
            ("HTTPServer", "http_server"),
            ("list-repos", "list_repos"),
            ("admin.users/List", "admin_users_list"),
            ("v2Search", "v2_search"),
            ("git_diff_unstaged", "git_diff_unstaged"),
            ("--x--", "x"),
            ("3d", "_3d"),
            ("", "tool"),
            ("ünïcode", "n_code"),
            ("def", "def_"),
            ("Import", "import_"),
        ];
        for (name, want) in cases {
            assert_eq!(identifier(name), want, "{name}");
        }
    }

    #[test]
    fn collisions_resolve_by_original_name() {
        let names = ["get_item", "getItem", "get-item", "other"];
        let got = assign(&names);
        // The exact identifier keeps its name; then get-item, getItem.
        assert_eq!(got, ["get_item", "get_item_3", "get_item_2", "other"]);
        let mut reversed = names;
        reversed.reverse();
        let got_reversed = assign(&reversed);
        assert_eq!(
            got_reversed,
            ["other", "get_item_2", "get_item_3", "get_item"]
        );
        // A suffix that a real tool already has is skipped.
        assert_eq!(assign(&["a", "a_2", "A"]), ["a", "a_2", "a_3"]);
    }
}
