//! Filing a disagreement into a class, in this order:
//!
//! * `known-compile-destination`: the disagreement vanishes when every
//!   assignment to names goes through a fresh temporary (`x = e` becomes
//!   `_dt1 = e` then `x = _dt1`): the compiler wrote the destination of
//!   an assignment before it had read all the operands that refer to it
//!   (`x = {"id": x}` built a dict that contains itself).
//! * `filtered-resource-limit`: codemode stopped the program with
//!   `resource limit exceeded`. starlark-go has no budgets, so a budget
//!   refusal is the deliberate deviation, not a defect; such programs are
//!   counted and sampled, never reported as disagreements.
//! * `known-byte-strings`: the program has a non-ASCII character. codemode
//!   strings hold valid UTF-8 where starlark-go's are byte strings, so an
//!   index or slice into a multi-byte character differs (a known class).
//! * otherwise the classes of both outcomes and the reference's message with
//!   digits blanked, e.g. `runtime-error-vs-invalid: zero is not a valid
//!   slice step`.

use crate::compare::{agrees, run_codemode, signature, Outcome};
use crate::reference::Reference;

pub fn classify(
    program: &str,
    expected: &str,
    got: &Outcome,
    reference: &mut Reference,
) -> Result<String, String> {
    if let Some(t) = through_temporaries(program) {
        // (A reference that dies here is restarted by the caller.)
        if let Ok(exp) = reference.run_one(&t) {
            if agrees(&exp, &run_codemode(&t)) {
                return Ok("known-compile-destination".into());
            }
        }
    }
    if let Outcome::Limit(_) = got {
        return Ok("filtered-resource-limit".into());
    }
    if !program.is_ascii() {
        return Ok("known-byte-strings".into());
    }
    let sig = signature(expected, got);
    let slug: String = sig
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok(slug.trim_matches('_').chars().take(80).collect())
}

/// `program` with each assignment to names (`x = e`, `a, b = e`) split into
/// an assignment to a fresh temporary and one from it; `None` when there is
/// no such assignment.
pub fn through_temporaries(program: &str) -> Option<String> {
    let mut out = String::new();
    let mut n = 0;
    for line in program.lines() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        if let Some((lhs, rhs)) = body.split_once(" = ") {
            let names_only = !lhs.is_empty()
                && lhs
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_, ()[]".contains(c))
                && !lhs.contains("[")
                || lhs.starts_with('[') && lhs.ends_with(']') && !lhs[1..].contains('[');
            let keyword = ["def ", "for ", "if ", "elif ", "return ", "print("]
                .iter()
                .any(|k| lhs.starts_with(k));
            if names_only && !keyword {
                n += 1;
                out.push_str(&format!("{indent}_dt{n} = {rhs}\n{indent}{lhs} = _dt{n}\n"));
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    (n > 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::through_temporaries;

    #[test]
    fn assignments_to_names_go_through_temporaries() {
        let p = "def main():\n    x = {\"a\": x}\n    a, b = b, a\n    d[k] = 1\n    return x\n";
        assert_eq!(
            through_temporaries(p).unwrap(),
            "def main():\n    _dt1 = {\"a\": x}\n    x = _dt1\n    _dt2 = b, a\n    a, b = _dt2\n    d[k] = 1\n    return x\n"
        );
        assert_eq!(through_temporaries("def main():\n    return 1\n"), None);
    }
}
