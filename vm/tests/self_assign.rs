//! Property test of assignments whose right side reads their own target.
//!
//! The compiler may evaluate an expression straight into the register of
//! the local it is assigned to; that is only right when nothing reads the
//! variable's old value after the register is first written. Each program
//! here evaluates a random expression twice: first into a fresh variable
//! (`r = E`, which `E` does not read) and then into the variable it reads
//! (`x = E`). The expressions are pure and well typed, so both must give
//! the same value. The variable holds a dict, an int, a list or a string. The variable is a plain local, a parameter and a
//! captured variable (a cell) in turn, and every kind of expression the
//! compiler handles appears at every depth.

mod common;

use codemode_vm::{execute, Data, ExecError, Limits};
use common::NoHost;
use proptest::prelude::*;

/// A small deterministic generator (splitmix64) driven by proptest's seed.
struct Gen {
    state: u64,
}

impl Gen {
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An int-valued expression. `x` is always a dict with the keys
    /// `"n"` (an int), `"l"` (a list of ints) and `"s"` (a string).
    fn int(&mut self, depth: u32) -> String {
        if depth == 0 {
            return match self.below(4) {
                0 => self.below(5).to_string(),
                1 => "x[\"n\"]".into(),
                2 => "len(x[\"l\"])".into(),
                _ => "len(x[\"s\"])".into(),
            };
        }
        let d = depth - 1;
        match self.below(14) {
            0 => format!("({} + {})", self.int(d), self.int(d)),
            1 => format!("({} * {})", self.int(d), self.int(d)),
            2 => format!("-{}", self.int(d)),
            3 => format!("({} if {} else {})", self.int(d), self.bool(d), self.int(d)),
            4 => format!("({} and {})", self.int(d), self.int(d)),
            5 => format!("({} or {})", self.int(d), self.int(d)),
            6 => format!("len({})", self.list(d)),
            7 => format!("{{\"k\": {}, \"j\": {}}}[\"k\"]", self.int(d), self.int(d)),
            8 => format!("[{}, {}][1]", self.int(d), self.int(d)),
            9 => format!("({} + [{}])[0]", self.list(d), self.int(d)),
            10 => format!("max([{}] + {})", self.int(d), self.list(d)),
            11 => format!("x.get(\"n\", {})", self.int(d)),
            12 => format!("{}[\"n\"]", self.dict(d)),
            _ => format!("len({{k: {} for k in x}})", self.int(d)),
        }
    }

    fn list(&mut self, depth: u32) -> String {
        if depth == 0 {
            return match self.below(3) {
                0 => "x[\"l\"]".into(),
                1 => "[]".into(),
                _ => format!("[{}]", self.below(5)),
            };
        }
        let d = depth - 1;
        match self.below(13) {
            0 => format!("[{}, {}]", self.int(d), self.int(d)),
            1 => format!("[{} for v in {}]", self.int(d), self.list(d)),
            2 => format!(
                "[v + {} for v in {} if v > {}]",
                self.int(d),
                self.list(d),
                self.int(d)
            ),
            3 => format!("({} + {})", self.list(d), self.list(d)),
            4 => format!("{}[1:]", self.list(d)),
            5 => format!("{}[::-1]", self.list(d)),
            6 => format!("sorted({})", self.list(d)),
            7 => format!(
                "({} if {} else {})",
                self.list(d),
                self.bool(d),
                self.list(d)
            ),
            8 => format!("({} or {})", self.list(d), self.list(d)),
            9 => format!("({} and {})", self.list(d), self.list(d)),
            10 => format!("list(({}, {}))", self.int(d), self.int(d)),
            11 => format!("[x for x in {}]", self.list(d)),
            _ => format!("[x * 2 for x in {} if x > 0]", self.list(d)),
        }
    }

    fn str(&mut self, depth: u32) -> String {
        if depth == 0 {
            return match self.below(2) {
                0 => "x[\"s\"]".into(),
                _ => "\"a\"".into(),
            };
        }
        let d = depth - 1;
        match self.below(8) {
            0 => format!("({} + {})", self.str(d), self.str(d)),
            1 => format!("str({})", self.int(d)),
            2 => format!("{}.upper()", self.str(d)),
            3 => format!("(\"%s-%s\" % ({}, {}))", self.str(d), self.int(d)),
            4 => format!("\",\".join([{}, {}])", self.str(d), self.str(d)),
            5 => format!("({} if {} else {})", self.str(d), self.bool(d), self.str(d)),
            6 => format!("{}[1:]", self.str(d)),
            _ => format!("\"{{}}{{}}\".format({}, {})", self.str(d), self.int(d)),
        }
    }

    fn bool(&mut self, depth: u32) -> String {
        if depth == 0 {
            return match self.below(2) {
                0 => "(x[\"n\"] > 2)".into(),
                _ => "(\"a\" in x[\"s\"])".into(),
            };
        }
        let d = depth - 1;
        match self.below(5) {
            0 => format!("({} < {})", self.int(d), self.int(d)),
            1 => format!("({} in {})", self.int(d), self.list(d)),
            2 => format!("(not {})", self.bool(d)),
            3 => format!("({} == {})", self.str(d), self.str(d)),
            _ => format!("({} and {})", self.bool(d), self.bool(d)),
        }
    }

    /// A dict with the shape of `x`.
    fn dict(&mut self, depth: u32) -> String {
        if depth == 0 {
            return "x".into();
        }
        let d = depth - 1;
        match self.below(12) {
            0 | 1 => format!(
                "{{\"n\": {}, \"l\": {}, \"s\": {}}}",
                self.int(d),
                self.list(d),
                self.str(d)
            ),
            2 => format!("dict(x, n = {})", self.int(d)),
            3 => format!(
                "dict(n = {}, l = {}, s = {})",
                self.int(d),
                self.list(d),
                self.str(d)
            ),
            4 => "{k: x[k] for k in x}".into(),
            5 => format!(
                "({} if {} else {})",
                self.dict(d),
                self.bool(d),
                self.dict(d)
            ),
            6 => format!("({} or {})", self.dict(d), self.dict(d)),
            7 => format!("(lambda a = {}: a)()", self.dict(d)),
            8 => format!("({} and {})", self.dict(d), self.dict(d)),
            // A falsy left operand that does not read `x`.
            9 => format!("({{}} or {})", self.dict(d)),
            10 => format!("({{k: x[k] for k in x if k == \"q\"}} or {})", self.dict(d)),
            _ => format!("({} | {{\"n\": {}}})", self.dict(d), self.int(d)),
        }
    }
}

const INIT: &str = "{\"n\": 3, \"l\": [1, 4], \"s\": \"ab\"}";

/// The variables a program assigns: `x` (a dict of the shape above) and
/// copies of its entries in `n`, `l` and `s`.
const SETUP: &str = "    n = x[\"n\"]\n    l = x[\"l\"]\n    s = x[\"s\"]\n";

/// A random assignment `(target, expression)` whose expression reads the
/// target: a dict for `x`, or an int, list or string for `n`, `l` or `s`
/// (whose expressions read the variable where the generator reads the
/// corresponding entry of `x`).
fn step(g: &mut Gen, depth: u32) -> (&'static str, String) {
    match g.below(4) {
        0 => ("n", g.int(depth).replace("x[\"n\"]", "n")),
        1 => ("l", g.list(depth).replace("x[\"l\"]", "l")),
        2 => ("s", g.str(depth).replace("x[\"s\"]", "s")),
        _ => ("x", g.dict(depth)),
    }
}

/// A program whose `main` returns a list of `[r, v]` pairs, one for each
/// assignment `v = E` of `steps`, with `v` a plain local, a parameter and a
/// cell in turn.
fn program(steps: &[(&str, String)]) -> String {
    let mut body = String::new();
    for (v, e) in steps {
        body.push_str(&format!(
            "    r = {e}\n    {v} = {e}\n    out.append([r, {v}])\n"
        ));
    }
    format!(
        "def plain(out):\n    x = {INIT}\n{SETUP}{body}\n\
         def param(out, x, n, l, s):\n{body}\n\
         def cell(out):\n    x = {INIT}\n{SETUP}    get = lambda: [x, n, l, s]\n{body}    \
         out.append([get(), [x, n, l, s]])\n\n\
         def main():\n    out = []\n    plain(out)\n    x = {INIT}\n    \
         param(out, x, x[\"n\"], x[\"l\"], x[\"s\"])\n    cell(out)\n    return out\n"
    )
}

fn run(src: &str) -> Result<Data, ExecError<()>> {
    execute(src, &[], &NoHost, &Limits::default(), None)
}

/// Checks that every pair of `main`'s result has two equal values.
fn check_pairs(src: &str) -> Result<usize, String> {
    let pairs = match run(src) {
        Ok(Data::List(pairs)) => pairs,
        other => return Err(format!("{other:?}")),
    };
    for p in &pairs {
        match p {
            Data::List(rx) if rx.len() == 2 && rx[0] == rx[1] => {}
            _ => return Err(format!("pair differs: {}", p.to_json_string())),
        }
    }
    Ok(pairs.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn assigning_an_expression_to_a_variable_it_reads(seed in any::<u64>(), depth in 1u32..5) {
        let mut g = Gen { state: seed };
        let steps: Vec<_> = (0..4).map(|_| step(&mut g, depth)).collect();
        let src = program(&steps);
        match check_pairs(&src) {
            Ok(n) => prop_assert_eq!(n, 3 * steps.len() + 1),
            Err(e) => prop_assert!(false, "{}\n{}", e, src),
        }
    }
}

#[test]
fn dict_displays_reading_their_target() {
    // The cases of the original report, through the same check.
    let steps = [
        ("x", "{\"n\": x[\"n\"], \"l\": x[\"l\"], \"s\": x[\"s\"]}"),
        (
            "x",
            "{\"n\": len(x), \"l\": [x[\"n\"]], \"s\": x[\"s\"] + x[\"s\"]}",
        ),
        ("x", "{k: x[k] for k in x}"),
        (
            "x",
            "x and {\"n\": x[\"n\"] + 1, \"l\": x[\"l\"], \"s\": \"\"}",
        ),
        ("l", "[v * 2 for v in l]"),
        ("s", "{s: s}[s]"),
    ];
    let steps: Vec<_> = steps.iter().map(|&(v, e)| (v, e.to_string())).collect();
    assert_eq!(check_pairs(&program(&steps)), Ok(19));
}
