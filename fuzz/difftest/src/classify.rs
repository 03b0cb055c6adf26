//! Filing a disagreement into a class, in this order:
//!
//! * `filtered-reference-crash`: the reference's line is `reference crashed:
//!   ...`: the binding raised a Python exception of its own while it ran the
//!   program (it cannot build the error of a message holding invalid UTF-8).
//! * `filtered-resource-limit`: codemode stopped the program with
//!   `resource limit exceeded`. starlark-go has no budgets, so a budget
//!   refusal is the deliberate deviation, not a defect; such programs are
//!   counted and sampled, never reported as disagreements.
//! * otherwise the classes of both outcomes and the reference's message with
//!   digits blanked, e.g. `runtime-error-vs-invalid: zero is not a valid
//!   slice step`.
//!
//! (A reference process that dies or hangs on a program is filed as
//! `filtered-reference-crash` / `filtered-reference-timeout` by the caller
//! before it gets here.)

use crate::compare::{signature, Outcome};

pub fn classify(expected: &str, got: &Outcome) -> String {
    if expected.starts_with("reference crashed: ") {
        return "filtered-reference-crash".into();
    }
    if let Outcome::Limit(_) = got {
        return "filtered-resource-limit".into();
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
    slug.trim_matches('_').chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::classify;
    use crate::compare::run_codemode;

    #[test]
    fn a_budget_refusal_is_filtered_and_the_rest_named_by_outcomes() {
        let got = run_codemode("def main():\n    return 1 // 0\n");
        assert_eq!(classify("{\"result\":0}", &got), "result-vs-invalid");
        assert_eq!(
            classify(
                "runtime error: <codemode> in main:2:14: index 12 out of range",
                &got
            ),
            "runtime-error-vs-invalid__index_00_out_of_range"
        );
        let got = run_codemode(
            "def main():\n    x = \"ab\"\n    for i in range(40):\n        x = x + x\n    return len(x)\n",
        );
        assert_eq!(
            classify("reference crashed: TypeError: EvalError.__init__()", &got),
            "filtered-reference-crash"
        );
        assert!(matches!(got, crate::compare::Outcome::Limit(_)), "{got:?}");
        assert_eq!(
            classify("{\"result\":2199023255552}", &got),
            "filtered-resource-limit"
        );
    }
}
