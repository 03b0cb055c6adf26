//! The program generator: a well-typed random program of the codemode
//! dialect, a pure function of a seed.
//!
//! Generation is type-directed. Every variable in scope has a static type
//! (int, float, bool, string, None, a homogeneous list, a tuple, a dict
//! with string or int keys, a record — a dict display with fixed string
//! fields — or a function signature), and every expression is produced for
//! a wanted type from productions that yield it: literals, variables,
//! operators, builtins, methods, comprehensions, lambdas and calls of the
//! program's own functions. So almost every program runs to its end and
//! returns a list of observations (`out.append(repr(x))`) that compares
//! many intermediate values; a small weight of statements is wrong on
//! purpose (a missing key, an index out of range, an operand of the wrong
//! type, a division by zero), and then both interpreters must fail with the
//! same message.
//!
//! Sizes stay bounded so that a program never approaches codemode's
//! budgets: loops run over at most a few items, concatenations add a short
//! operand, repetitions repeat a literal, and self-nesting rebuilds
//! (`x = [x, x]`) happen only outside loops and up to a small depth. Types
//! change only by assignments at the top level of a function body; inside
//! an `if` or a loop an assignment keeps the variable's type and names
//! first bound there go out of the generator's scope at the block's end.
//!
//! Every submodule adds methods to [`Gen`] for one kind of thing generated:
//! `types` (the static types and their random choice), `scope` (the
//! variables a function may read, rebind or mutate), `literals`, `expr`
//! (the productions every type shares), `numbers` (int, float, bool),
//! `strings` (with `%` and `format`), `collections` (lists, tuples, dicts,
//! records, comprehensions and iteration sources), `functions` (helpers,
//! nested defs, lambdas, calls), `stmt` (statements and blocks),
//! `mutation` (in-place changes) and `errors` (statements wrong on
//! purpose). A program is a pure function of its seed: the order in which
//! these draw from the one `Rng` is the generator's behaviour, so a change
//! that only moves code must leave `difftest gen SEED` unchanged.

mod collections;
mod errors;
mod expr;
mod functions;
mod literals;
mod mutation;
mod numbers;
mod scope;
mod stmt;
mod strings;
mod types;

use crate::rng::Rng;
use scope::Var;
use types::{Sig, Ty};

/// Knobs of the generator.
#[derive(Clone, Debug)]
pub struct Options {
    /// Percent of string literals drawn from a pool of non-ASCII strings.
    pub unicode_pct: u32,
    /// Percent of statements that are wrong on purpose.
    pub error_pct: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            unicode_pct: 0,
            error_pct: 1,
        }
    }
}

/// The state of one program's generation: the random stream, the lines
/// emitted so far, and the scope (functions, variables, nesting).
pub struct Gen {
    rng: Rng,
    opts: Options,
    lines: Vec<String>,
    indent: usize,
    sigs: Vec<Sig>,
    /// Top-level functions by name and signature index.
    helpers: Vec<(String, usize)>,
    vars: Vec<Var>,
    /// Current function nesting level (1: a top-level def).
    level: usize,
    /// Block nesting inside the current function (0: its body).
    block: usize,
    loop_depth: usize,
    /// Inside main (where `out` exists).
    in_main: bool,
    counter: usize,
}

/// The program for `seed`.
pub fn generate(seed: u64, opts: &Options) -> String {
    let mut g = Gen {
        rng: Rng::new(seed),
        opts: opts.clone(),
        lines: Vec::new(),
        indent: 0,
        sigs: Vec::new(),
        helpers: Vec::new(),
        vars: Vec::new(),
        level: 0,
        block: 0,
        loop_depth: 0,
        in_main: false,
        counter: 0,
    };
    g.program();
    let mut s = g.lines.join("\n");
    s.push('\n');
    s
}

impl Gen {
    fn fresh(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}{}", self.counter)
    }

    fn emit(&mut self, line: impl AsRef<str>) {
        let mut s = "    ".repeat(self.indent);
        s.push_str(line.as_ref());
        self.lines.push(s);
    }

    fn program(&mut self) {
        // Frozen globals.
        for _ in 0..self.rng.below(3) {
            let ty = self.pick_ty(2);
            let e = self.literal(&ty);
            let name = self.fresh("G");
            self.emit(format!("{name} = {e}"));
            self.vars.push(Var {
                name,
                ty,
                level: 0,
                pinned: true,
            });
        }
        for _ in 0..self.rng.below(4) {
            self.helper();
        }
        self.emit("def main():");
        self.indent = 1;
        self.level = 1;
        self.in_main = true;
        self.emit("out = []");
        let n = 4 + self.rng.below(18);
        for _ in 0..n {
            self.stmt();
        }
        // Final observations of what is in scope.
        let names: Vec<(String, Ty)> = self
            .vars
            .iter()
            .filter(|v| v.level == 1)
            .map(|v| (v.name.clone(), v.ty.clone()))
            .collect();
        for (name, ty) in names.iter().rev().take(4) {
            let o = self.observe_expr(name, ty);
            self.emit(format!("out.append({o})"));
        }
        self.emit("return out");
        self.indent = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_a_function_of_its_seed() {
        let o = Options::default();
        assert_eq!(generate(42, &o), generate(42, &o));
        assert_ne!(generate(42, &o), generate(43, &o));
    }

    #[test]
    fn programs_are_ascii_unless_asked_and_mostly_run_to_the_end() {
        let o = Options::default();
        let mut ok = 0;
        for seed in 0..300 {
            let p = generate(seed, &o);
            assert!(p.is_ascii(), "seed {seed}");
            assert!(p.contains("def main():"), "seed {seed}");
            if let crate::compare::Outcome::Result(_) = crate::compare::run_codemode(&p) {
                ok += 1;
            }
        }
        // About two thirds succeed (a third fail on purpose or by chance).
        assert!(ok > 150, "{ok} of 300 succeeded");
        let u = Options {
            unicode_pct: 100,
            ..Options::default()
        };
        assert!((0..20).any(|s| !generate(s, &u).is_ascii()));
    }
}
