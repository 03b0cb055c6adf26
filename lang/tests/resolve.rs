//! Resolver tests: the binding of every identifier (local, cell, free,
//! global, predeclared, universal), the scopes of nested closures, and every
//! error message with its position, as starlark-go (the reference) reports
//! them. Expected texts were taken from the reference, not guessed.

use bumpalo::Bump;
use codemode_lang::ast::{
    Arg, Binding, Clause, Expr, ExprKind, Function, Ident, Module, ParamKind, Stmt, StmtKind,
};
use codemode_lang::{check, Names};

const UNIVERSE: &[&str] = &[
    "None", "True", "False", "len", "range", "print", "dict", "max",
];

fn names() -> Names<'static> {
    Names {
        predeclared: &["records"],
        universal: UNIVERSE,
    }
}

/// Parses and resolves `src`, then hands the module to `f`.
fn with_module<R>(src: &str, f: impl for<'a> FnOnce(&'a Module<'a>) -> R) -> R {
    let arena = Bump::new();
    match check(&arena, src, &names()) {
        Ok(module) => f(module),
        Err(e) => panic!("unexpected error: {}", e.render(src)),
    }
}

/// The rendered first error of `src`, in starlark-go's words (without
/// codemode's hint).
fn error(src: &str) -> String {
    let arena = Bump::new();
    match check(&arena, src, &names()) {
        Ok(_) => panic!("no error for:\n{src}"),
        Err(e) => e.with_hint(None).render(src),
    }
}

// ---- a walk over every identifier of the tree ------------------------------

/// Every identifier occurrence: (offset, name, binding), in tree order.
#[derive(Default)]
struct Idents<'a> {
    all: Vec<(u32, &'a str, Binding)>,
    functions: Vec<(&'a str, &'a Function<'a>)>,
}

impl<'a> Idents<'a> {
    fn ident(&mut self, id: &'a Ident<'a>) {
        self.all.push((id.span.start, id.name, id.binding.get()));
    }

    fn stmts(&mut self, stmts: &'a [&'a Stmt<'a>]) {
        for stmt in stmts {
            match &stmt.kind {
                StmtKind::Def { name, func } => {
                    self.ident(name);
                    self.function(name.name, func);
                }
                StmtKind::Expr(e) => self.expr(e),
                StmtKind::Assign { lhs, rhs, .. } => {
                    self.expr(lhs);
                    self.expr(rhs);
                }
                StmtKind::If { cond, then, els } => {
                    self.expr(cond);
                    self.stmts(then);
                    self.stmts(els);
                }
                StmtKind::For { vars, iter, body } => {
                    self.expr(vars);
                    self.expr(iter);
                    self.stmts(body);
                }
                StmtKind::While { cond, body } => {
                    self.expr(cond);
                    self.stmts(body);
                }
                StmtKind::Return(value) => {
                    if let Some(value) = value {
                        self.expr(value);
                    }
                }
                StmtKind::Load { names, .. } => {
                    for (to, _) in names.iter() {
                        self.ident(to);
                    }
                }
                StmtKind::Break | StmtKind::Continue | StmtKind::Pass => {}
            }
        }
    }

    fn function(&mut self, name: &'a str, func: &'a Function<'a>) {
        self.functions.push((name, func));
        for param in func.params {
            match &param.kind {
                ParamKind::Required(id) | ParamKind::Args(id) | ParamKind::Kwargs(id) => {
                    self.ident(id)
                }
                ParamKind::Optional(id, default) => {
                    self.ident(id);
                    self.expr(default);
                }
                ParamKind::Star => {}
            }
        }
        self.stmts(func.body);
    }

    fn expr(&mut self, e: &'a Expr<'a>) {
        match &e.kind {
            ExprKind::Ident(id) => self.ident(id),
            ExprKind::Literal(_) => {}
            ExprKind::Paren(x) | ExprKind::Unary { x, .. } => self.expr(x),
            ExprKind::List(xs) | ExprKind::Tuple(xs) => xs.iter().for_each(|x| self.expr(x)),
            ExprKind::Dict(entries) => {
                for entry in entries.iter() {
                    self.expr(entry.key);
                    self.expr(entry.value);
                }
            }
            ExprKind::ListComp { body, clauses } => {
                self.clauses(clauses);
                self.expr(body);
            }
            ExprKind::DictComp {
                key,
                value,
                clauses,
                ..
            } => {
                self.clauses(clauses);
                self.expr(key);
                self.expr(value);
            }
            ExprKind::Cond {
                then, cond, els, ..
            } => {
                self.expr(then);
                self.expr(cond);
                self.expr(els);
            }
            ExprKind::Lambda(func) => self.function("lambda", func),
            ExprKind::Call { func, args, .. } => {
                self.expr(func);
                for arg in args.iter() {
                    match arg {
                        Arg::Positional(v) | Arg::Star { value: v, .. } => self.expr(v),
                        Arg::StarStar { value, .. } => self.expr(value),
                        Arg::Named { name, value } => {
                            self.ident(name);
                            self.expr(value);
                        }
                    }
                }
            }
            ExprKind::Index { x, index, .. } => {
                self.expr(x);
                self.expr(index);
            }
            ExprKind::Slice {
                x, lo, hi, step, ..
            } => {
                self.expr(x);
                for part in [lo, hi, step].into_iter().flatten() {
                    self.expr(part);
                }
            }
            ExprKind::Dot { x, name, .. } => {
                self.expr(x);
                self.ident(name);
            }
            ExprKind::Binary { l, r, .. } => {
                self.expr(l);
                self.expr(r);
            }
        }
    }

    fn clauses(&mut self, clauses: &'a [Clause<'a>]) {
        for clause in clauses {
            match clause {
                Clause::For { vars, iter, .. } => {
                    self.expr(vars);
                    self.expr(iter);
                }
                Clause::If { cond, .. } => self.expr(cond),
            }
        }
    }
}

fn walk<'a>(module: &'a Module<'a>) -> Idents<'a> {
    let mut idents = Idents::default();
    idents.stmts(module.stmts);
    idents.all.sort_by_key(|&(pos, _, _)| pos);
    idents
}

/// The bindings of every occurrence of `name`, in source order.
fn bindings<'a>(module: &'a Module<'a>, name: &str) -> Vec<Binding> {
    walk(module)
        .all
        .iter()
        .filter(|&&(_, n, _)| n == name)
        .map(|&(_, _, b)| b)
        .collect()
}

/// Local names of the function `name` (the n-th lambda is `lambda`), with
/// `*` after captured ones.
fn locals<'a>(module: &'a Module<'a>, name: &str) -> Vec<String> {
    let idents = walk(module);
    let func = idents
        .functions
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .1;
    let scope = func.scope.get().expect("resolved");
    scope
        .locals
        .iter()
        .map(|l| format!("{}{}", l.name, if l.is_cell { "*" } else { "" }))
        .collect()
}

/// Free variables of the function `name`: (name, how the outer reaches it).
fn freevars<'a>(module: &'a Module<'a>, name: &str) -> Vec<(String, Binding)> {
    let idents = walk(module);
    let func = idents
        .functions
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .1;
    let scope = func.scope.get().expect("resolved");
    scope
        .freevars
        .iter()
        .map(|f| (f.name.to_string(), f.outer))
        .collect()
}

fn module_locals<'a>(module: &'a Module<'a>) -> Vec<String> {
    let scope = module.scope.get().expect("resolved");
    scope
        .locals
        .iter()
        .map(|l| format!("{}{}", l.name, if l.is_cell { "*" } else { "" }))
        .collect()
}

fn globals<'a>(module: &'a Module<'a>) -> Vec<&'a str> {
    module.globals.get().expect("resolved").to_vec()
}

use Binding::{Cell, Free, Global, Local, Predeclared, Universal, Unresolved};

// ---- bindings ---------------------------------------------------------------

#[test]
fn a_syntax_error_anywhere_wins_over_resolve_errors_before_it() {
    // The undefined names of the first lines do not hide a syntax error
    // after them. (Expected texts from the reference.)
    assert_eq!(
        error("x = nowhere\ndef f():\n    return y\nz = = 1\n"),
        "<codemode>:4:6: got '=', want primary expression"
    );
    assert_eq!(
        error("x = nowhere\n\ny = 'unterminated\n"),
        "<codemode>:3:5: unexpected newline in string"
    );
    // Without one, the resolver's first error, in starlark-go's order.
    assert_eq!(
        error("x = nowhere\ndef f():\n    return y\nz = 1\n"),
        "<codemode>:3:12: undefined: y"
    );
    // Globals bound by later statements are visible to earlier functions.
    with_module("def f():\n    return later\nlater = 1\n", |m| {
        assert_eq!(bindings(m, "later"), [Global(1), Global(1)]);
    });
}

#[test]
fn parameters_come_first_in_declaration_order() {
    let src = "def f(a, b=1, *args, c, **kw):\n    x = a\n    for i, j in args:\n        pass\n    return x + c\n\ndef main():\n    return f(1)\n";
    with_module(src, |m| {
        assert_eq!(locals(m, "f"), ["a", "b", "args", "c", "kw", "x", "i", "j"]);
        assert_eq!(bindings(m, "a"), [Local(0), Local(0)]);
        assert_eq!(bindings(m, "args"), [Local(2), Local(2)]);
        assert_eq!(bindings(m, "c"), [Local(3), Local(3)]);
        assert_eq!(bindings(m, "x"), [Local(5), Local(5)]);
        assert_eq!(bindings(m, "j"), [Local(7)]);
        assert_eq!(globals(m), ["f", "main"]);
        assert_eq!(bindings(m, "f"), [Global(0), Global(0)]);
    });
}

#[test]
fn globals_predeclared_and_universal() {
    let src = "limit = 3\n\ndef main():\n    return records.lookup(key=len(range(limit)))\n";
    with_module(src, |m| {
        assert_eq!(globals(m), ["limit", "main"]);
        assert_eq!(bindings(m, "limit"), [Global(0), Global(0)]);
        assert_eq!(bindings(m, "records"), [Predeclared(0)]);
        assert_eq!(bindings(m, "len"), [Universal(3)]);
        assert_eq!(bindings(m, "range"), [Universal(4)]);
        // Attribute and keyword names are not variables.
        assert_eq!(bindings(m, "lookup"), [Unresolved]);
        assert_eq!(bindings(m, "key"), [Unresolved]);
        assert!(locals(m, "main").is_empty());
    });
}

#[test]
fn predeclared_shadows_universal_and_globals_shadow_both() {
    let arena = Bump::new();
    let names = Names {
        predeclared: &["len", "records"],
        universal: UNIVERSE,
    };
    let src = "records = 1\n\ndef main():\n    return len(records)\n";
    let m = check(&arena, src, &names).expect("resolves");
    assert_eq!(bindings(m, "len"), [Predeclared(0)]);
    assert_eq!(bindings(m, "records"), [Global(0), Global(0)]);
}

#[test]
fn long_name_lists_resolve_to_the_first_occurrence() {
    // Up to 64 names the resolver scans the list; past that it indexes
    // it. Both give the index of a name's first occurrence.
    let mut long: Vec<String> = (0..200).map(|i| format!("root{i}")).collect();
    long.extend(["root7".to_string(), "len".to_string()]);
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    let short = ["a", "len", "b", "len"];
    type Case<'c> = (&'c [&'c str], &'c str, &'c [(&'c str, u32)]);
    let cases: [Case; 2] = [
        (
            &long,
            "def main():\n    return len([root7, root199])\n",
            &[("len", 201), ("root7", 7), ("root199", 199)],
        ),
        (
            &short,
            "def main():\n    return len([a, b])\n",
            &[("len", 1), ("b", 2)],
        ),
    ];
    for (predeclared, src, expected) in cases {
        let arena = Bump::new();
        let names = Names {
            predeclared,
            universal: UNIVERSE,
        };
        let m = check(&arena, src, &names).expect("resolves");
        for &(name, index) in expected {
            assert_eq!(bindings(m, name), [Predeclared(index)], "{name}");
        }
        let err = check(&arena, "def main():\n    return nope\n", &names).unwrap_err();
        assert_eq!(err.message, "undefined: nope");
    }
}

#[test]
fn globals_may_be_used_before_their_definition() {
    let src = "def main():\n    return helper()\n\ndef helper():\n    return limit\n\nlimit = 7\n";
    with_module(src, |m| {
        assert_eq!(globals(m), ["main", "helper", "limit"]);
        assert_eq!(bindings(m, "helper"), [Global(1), Global(1)]);
        assert_eq!(bindings(m, "limit"), [Global(2), Global(2)]);
    });
}

#[test]
fn a_local_used_before_assignment_is_still_local() {
    // starlark-go fails at run time ("referenced before assignment").
    let src = "x = 1\n\ndef main():\n    y = x\n    x = 2\n    return y\n";
    with_module(src, |m| {
        assert_eq!(bindings(m, "x"), [Global(0), Local(1), Local(1)]);
        assert_eq!(locals(m, "main"), ["y", "x"]);
    });
}

#[test]
fn captured_locals_become_cells_and_free_variables() {
    let src = "def main():\n    x = 1\n    y = 2\n    def inner():\n        return x\n    return inner() + y\n";
    with_module(src, |m| {
        assert_eq!(locals(m, "main"), ["x*", "y", "inner"]);
        assert_eq!(bindings(m, "x"), [Cell(0), Free(0)]);
        assert_eq!(bindings(m, "y"), [Local(1), Local(1)]);
        assert_eq!(bindings(m, "inner"), [Local(2), Local(2)]);
        assert_eq!(freevars(m, "inner"), [("x".to_string(), Cell(0))]);
        assert!(freevars(m, "main").is_empty());
    });
}

#[test]
fn free_variables_chain_through_every_level() {
    let src = "def main():\n    v = 1\n    w = 2\n    def b():\n        def c():\n            return v + w\n        return c() + w\n    return b()\n";
    with_module(src, |m| {
        assert_eq!(locals(m, "main"), ["v*", "w*", "b"]);
        // Inner functions are resolved first: c's uses thread v and w
        // through b, in c's order; b's own use of w reuses that free var.
        assert_eq!(
            freevars(m, "c"),
            [("v".to_string(), Free(0)), ("w".to_string(), Free(1))]
        );
        assert_eq!(
            freevars(m, "b"),
            [("v".to_string(), Cell(0)), ("w".to_string(), Cell(1))]
        );
        assert_eq!(locals(m, "b"), ["c"]);
        assert_eq!(bindings(m, "v"), [Cell(0), Free(0)]);
        assert_eq!(bindings(m, "w"), [Cell(1), Free(1), Free(1)]);
    });
}

#[test]
fn a_parameter_can_be_captured() {
    let src = "def main(n=2):\n    return (lambda k: n * k)(3)\n";
    with_module(src, |m| {
        assert_eq!(locals(m, "main"), ["n*"]);
        assert_eq!(locals(m, "lambda"), ["k"]);
        assert_eq!(freevars(m, "lambda"), [("n".to_string(), Cell(0))]);
        assert_eq!(bindings(m, "n"), [Cell(0), Free(0)]);
        assert_eq!(bindings(m, "k"), [Local(0), Local(0)]);
    });
}

#[test]
fn comprehension_variables_take_function_slots_and_shadow() {
    let src = "def main():\n    x = 1\n    y = [x for x in [2]]\n    return x\n";
    with_module(src, |m| {
        // The right-hand side is resolved (and its variable bound) first.
        assert_eq!(locals(m, "main"), ["x", "x", "y"]);
        assert_eq!(bindings(m, "x"), [Local(0), Local(1), Local(1), Local(0)]);
    });
}

#[test]
fn the_first_iterable_of_a_comprehension_is_outside_it() {
    let src = "def main():\n    x = [1, 2]\n    return [x for x in x]\n";
    with_module(src, |m| {
        assert_eq!(bindings(m, "x"), [Local(0), Local(1), Local(1), Local(0)]);
    });
}

#[test]
fn top_level_comprehensions_have_module_locals() {
    let src = "xs = [i * 2 for i in range(3)]\nfs = [lambda: j for j in xs]\n\ndef main():\n    return xs\n";
    with_module(src, |m| {
        assert_eq!(globals(m), ["xs", "fs", "main"]);
        assert_eq!(module_locals(m), ["i", "j*"]);
        assert_eq!(bindings(m, "i"), [Local(0), Local(0)]);
        assert_eq!(bindings(m, "j"), [Free(0), Cell(1)]);
        assert_eq!(freevars(m, "lambda"), [("j".to_string(), Cell(1))]);
    });
}

#[test]
fn lambdas_in_comprehensions_capture_the_loop_variable() {
    let src = "def main():\n    fs = [lambda: i for i in range(3)]\n    return [f() for f in fs]\n";
    with_module(src, |m| {
        assert_eq!(locals(m, "main"), ["i*", "fs", "f"]);
        assert_eq!(bindings(m, "i"), [Free(0), Cell(0)]);
    });
}

#[test]
fn loaded_names_are_top_level_locals() {
    // starlark-go accepts load at the top level and fails when it runs.
    let src = "load(\"lib.star\", \"helper\")\n\ndef main():\n    return helper\n";
    with_module(src, |m| {
        assert_eq!(module_locals(m), ["helper*"]);
        assert_eq!(freevars(m, "main"), [("helper".to_string(), Cell(0))]);
        assert_eq!(bindings(m, "helper"), [Cell(0), Free(0)]);
    });
}

#[test]
fn set_is_usable_when_bound() {
    with_module("set = 3\n\ndef main():\n    return set\n", |m| {
        assert_eq!(bindings(m, "set"), [Global(0), Global(0)]);
    });
    with_module("def main():\n    set = [1]\n    return set\n", |m| {
        assert_eq!(bindings(m, "set"), [Local(0), Local(0)]);
    });
}

#[test]
fn many_functions_and_names_resolve_quickly() {
    let mut src = String::new();
    for i in 0..3000 {
        src.push_str(&format!(
            "def f{i}(a, b=1):\n    t = [a + b + k for k in range(a)]\n    return len(t) + g{i}\n\ng{i} = {i}\n"
        ));
    }
    src.push_str("def main():\n    return f1(2)\n");
    // The best of up to three runs stays under the bound, so one slow
    // stretch of a shared machine cannot fail the test.
    let mut best = std::time::Duration::MAX;
    for _ in 0..3 {
        let start = std::time::Instant::now();
        with_module(&src, |m| assert_eq!(globals(m).len(), 6001));
        best = best.min(start.elapsed());
        if best.as_secs() < 5 {
            break;
        }
    }
    assert!(best.as_secs() < 5, "{best:?}");
}

// ---- errors -----------------------------------------------------------------

#[test]
fn every_error_with_its_position() {
    // (program, starlark-go's rendered error)
    let cases: &[(&str, &str)] = &[
        (
            "def main():\n    return y\n",
            "<codemode>:2:12: undefined: y",
        ),
        (
            "limit = 10\n\ndef main():\n    return limt\n",
            "<codemode>:4:12: undefined: limt (did you mean limit?)",
        ),
        (
            "def main():\n    count = 1\n    return coutn\n",
            "<codemode>:3:12: undefined: coutn (did you mean count?)",
        ),
        (
            "def main():\n    yy = 1\n    return yx\n",
            "<codemode>:3:12: undefined: yx",
        ),
        (
            "def main():\n    n = len\n    return lenn([1])\n",
            "<codemode>:3:12: undefined: lenn (did you mean len?)",
        ),
        (
            "def main():\n    return lenn([1])\n",
            "<codemode>:2:12: undefined: lenn",
        ),
        (
            "def main():\n    my_var = 1\n    return myvar\n",
            "<codemode>:3:12: undefined: myvar (did you mean my_var?)",
        ),
        (
            "def main():\n    a = b\n    def g():\n        return c\n    return a\n",
            "<codemode>:4:16: undefined: c",
        ),
        (
            "x = zz\n\ndef main():\n    return yy\n",
            "<codemode>:4:12: undefined: yy",
        ),
        (
            "x = [qq1 for qq in []]\n\ndef main():\n    return 1\n",
            "<codemode>:1:6: undefined: qq1 (did you mean qq?)",
        ),
        (
            "def main():\n    ys = [item for item in range(3)]\n    return item\n",
            "<codemode>:3:12: undefined: item",
        ),
        (
            "def main():\n    return y\n\ndef f(a, a):\n    pass\n",
            "<codemode>:4:10: duplicate parameter: a",
        ),
        (
            "def main():\n    return y\nbreak\n",
            "<codemode>:3:1: break not in a loop",
        ),
        (
            "def main():\n    return set([1])\n",
            "<codemode>:2:12: this Starlark dialect does not support sets",
        ),
        (
            "def main():\n    while True:\n        pass\n",
            "<codemode>:2:5: this Starlark dialect does not support while loops",
        ),
        (
            "while False:\n    pass\n",
            "<codemode>:1:1: this Starlark dialect does not support while loops",
        ),
        (
            "if True:\n    x = 1\n",
            "<codemode>:1:1: if statement not within a function",
        ),
        (
            "for x in []:\n    pass\n",
            "<codemode>:1:1: for loop not within a function",
        ),
        (
            "return 1\n",
            "<codemode>:1:1: return statement not within a function",
        ),
        (
            "def main():\n    break\n",
            "<codemode>:2:5: break not in a loop",
        ),
        ("continue\n", "<codemode>:1:1: continue not in a loop"),
        (
            "def main():\n    for x in []:\n        def g():\n            continue\n",
            "<codemode>:4:13: continue not in a loop",
        ),
        (
            "x = 1\nx = 2\n",
            "<codemode>:2:1: cannot reassign global x declared at <codemode>:1:1",
        ),
        (
            "x = 1\nx += 2\n",
            "<codemode>:2:1: cannot reassign global x declared at <codemode>:1:1",
        ),
        (
            "def main():\n    return 1\n\ndef main():\n    return 2\n",
            "<codemode>:4:5: cannot reassign global main declared at <codemode>:1:5",
        ),
        (
            "a, a = 1, 2\n",
            "<codemode>:1:4: cannot reassign global a declared at <codemode>:1:1",
        ),
        (
            "load(\"m\", \"a\")\na = 1\n",
            "<codemode>:2:1: cannot reassign local a declared at <codemode>:1:12",
        ),
        (
            "load(\"m\", \"a\", \"a\")\n",
            "<codemode>:1:17: cannot reassign top-level a",
        ),
        (
            "load(\"m\", \"\")\n",
            "<codemode>:1:12: load: empty identifier",
        ),
        (
            "load(\"m\", \"_a\")\n",
            "<codemode>:1:12: load: names with leading underscores are not exported: _a",
        ),
        (
            "load(\"m\", b = \"_a\")\n",
            "<codemode>:1:16: load: names with leading underscores are not exported: _a",
        ),
        (
            "def main():\n    load(\"m\", \"a\")\n",
            "<codemode>:2:5: load statement within a function",
        ),
        (
            "def f(a, a):\n    pass\n",
            "<codemode>:1:10: duplicate parameter: a",
        ),
        (
            "def f(a, a=1):\n    pass\n",
            "<codemode>:1:11: duplicate parameter: a",
        ),
        (
            "def f(a, a = 1):\n    pass\n",
            "<codemode>:1:12: duplicate parameter: a",
        ),
        (
            "def f(a, *a):\n    pass\n",
            "<codemode>:1:11: duplicate parameter: a",
        ),
        (
            "def f(*a, a):\n    pass\n",
            "<codemode>:1:8: duplicate parameter: a",
        ),
        (
            "def f(a, **a):\n    pass\n",
            "<codemode>:1:12: duplicate parameter: a",
        ),
        (
            "def f(a=1, b):\n    pass\n",
            "<codemode>:1:12: required parameter may not follow optional",
        ),
        (
            "def f(**k, a):\n    pass\n",
            "<codemode>:1:12: required parameter may not follow **k",
        ),
        (
            "def f(**k, a=1):\n    pass\n",
            "<codemode>:1:13: optional parameter may not follow **k",
        ),
        (
            "def f(**k, *a):\n    pass\n",
            "<codemode>:1:12: * parameter may not follow **k",
        ),
        (
            "def f(*a, *b):\n    pass\n",
            "<codemode>:1:11: multiple * parameters not allowed",
        ),
        (
            "def f(**a, **b):\n    pass\n",
            "<codemode>:1:12: multiple ** parameters not allowed",
        ),
        (
            "def f(*):\n    pass\n",
            "<codemode>:1:7: bare * must be followed by keyword-only parameters",
        ),
        (
            "def main():\n    return (lambda a, a: 1)\n",
            "<codemode>:2:23: duplicate parameter: a",
        ),
        (
            "def main():\n    return dict(a=1, a=2)\n",
            "<codemode>:2:22: keyword argument \"a\" is repeated",
        ),
        (
            "def main():\n    return dict(a=1, 2)\n",
            "<codemode>:2:22: positional argument may not follow named",
        ),
        (
            "def main():\n    return dict(**{}, a=1)\n",
            "<codemode>:2:23: keyword argument may not follow **kwargs",
        ),
        (
            "def main():\n    return dict(*[], a=1)\n",
            "<codemode>:2:22: keyword argument may not follow *args",
        ),
        (
            "def main():\n    return dict(**{}, *[])\n",
            "<codemode>:2:23: *args may not follow **kwargs",
        ),
        (
            "def main():\n    return dict(*[], *[])\n",
            "<codemode>:2:22: multiple *args not allowed",
        ),
        (
            "def main():\n    return dict(**{}, **{})\n",
            "<codemode>:2:23: multiple **kwargs not allowed",
        ),
        (
            "def main():\n    return dict(*[], 1)\n",
            "<codemode>:2:22: positional argument may not follow *args",
        ),
        (
            "def main():\n    return dict(**{}, 1)\n",
            "<codemode>:2:23: positional argument may not follow **kwargs",
        ),
        (
            "def main():\n    f() = 1\n",
            "<codemode>:2:5: can't assign to callexpr",
        ),
        (
            "def main():\n    1 = 1\n",
            "<codemode>:2:5: can't assign to literal",
        ),
        (
            "def main():\n    a + b = 1\n",
            "<codemode>:2:5: can't assign to binaryexpr",
        ),
        (
            "def main():\n    -a = 1\n",
            "<codemode>:2:5: can't assign to unaryexpr",
        ),
        (
            "def main():\n    {} = 1\n",
            "<codemode>:2:5: can't assign to dictexpr",
        ),
        (
            "def main():\n    a[1:2] = 1\n",
            "<codemode>:2:5: can't assign to sliceexpr",
        ),
        (
            "def main():\n    [x for x in y] = 1\n",
            "<codemode>:2:5: can't assign to comprehension",
        ),
        (
            "def main():\n    {x: 1 for x in y} = 1\n",
            "<codemode>:2:5: can't assign to comprehension",
        ),
        (
            "def main():\n    (a if b else c) = 1\n",
            "<codemode>:2:6: can't assign to condexpr",
        ),
        (
            "def main():\n    (lambda: 1) = 1\n",
            "<codemode>:2:6: can't assign to lambdaexpr",
        ),
        (
            "def main():\n    (f()) = 1\n",
            "<codemode>:2:6: can't assign to callexpr",
        ),
        (
            "def main():\n    f() += 1\n",
            "<codemode>:2:5: can't assign to callexpr",
        ),
        (
            "def main():\n    a, b += 1\n",
            "<codemode>:2:5: can't use tuple expression in augmented assignment",
        ),
        (
            "def main():\n    (a, b) += 1\n",
            "<codemode>:2:6: can't use tuple expression in augmented assignment",
        ),
        (
            "def main():\n    [a] += 1\n",
            "<codemode>:2:5: can't use list expression in augmented assignment",
        ),
        (
            "def main():\n    for f() in []:\n        pass\n",
            "<codemode>:2:9: can't assign to callexpr",
        ),
        (
            "def main():\n    return [1 for 1 in []]\n",
            "<codemode>:2:19: can't assign to literal",
        ),
    ];
    let mut wrong = Vec::new();
    for &(src, want) in cases {
        let got = error(src);
        if got != want {
            wrong.push(format!("{src:?}\n  want {want}\n  got  {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn call_argument_limits() {
    let many = |n: usize, f: &dyn Fn(usize) -> String| {
        let args: Vec<String> = (0..n).map(f).collect();
        format!("def main():\n    return max({})\n", args.join(", "))
    };
    assert_eq!(
        error(&many(256, &|_| "1".into())),
        "<codemode>:2:12: 256 positional arguments in call, limit is 255"
    );
    assert_eq!(
        error(&many(256, &|i| format!("a{i}=1"))),
        "<codemode>:2:12: 256 keyword arguments in call, limit is 255"
    );
    with_module(&many(255, &|_| "1".into()), |_| ());
}

#[test]
fn empty_targets_are_assignable() {
    with_module(
        "def main():\n    () = ()\n    [] = []\n    return 1\n",
        |_| (),
    );
}

#[test]
fn deep_nesting_threads_free_variables_through_every_level() {
    // As deep as the parser allows blocks to nest, minus some slack.
    let depth = 150;
    let mut src = String::from("def main():\n    v = 1\n");
    for level in 1..depth {
        let indent = "    ".repeat(level);
        src.push_str(&format!("{indent}def f{level}():\n"));
    }
    src.push_str(&format!("{}return v\n", "    ".repeat(depth)));
    src.push_str("    return 1\n");
    with_module(&src, |m| {
        assert_eq!(locals(m, "main"), ["v*", "f1"]);
        assert_eq!(freevars(m, "f1"), [("v".to_string(), Cell(0))]);
        for level in 2..depth {
            assert_eq!(
                freevars(m, &format!("f{level}")),
                [("v".to_string(), Free(0))]
            );
        }
        assert_eq!(bindings(m, "v"), [Cell(0), Free(0)]);
    });
}

#[test]
fn deep_expressions_resolve() {
    let depth = 150;
    let src = format!(
        "def main():\n    x = 1\n    return {}x{}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    with_module(&src, |m| assert_eq!(bindings(m, "x"), [Local(0), Local(0)]));
    let src = format!(
        "def main():\n    x = 1\n    return {}x{}\n",
        "[lambda: ".repeat(depth / 4),
        "]".repeat(depth / 4)
    );
    with_module(&src, |m| assert_eq!(bindings(m, "x"), [Cell(0), Free(0)]));
}

#[test]
fn long_left_nested_chains_do_not_recurse() {
    // `x + x + ...` and `x.a.a...` are deep trees without deep brackets;
    // if the parser accepts them, resolving them must not exhaust the stack.
    let n = 20_000;
    for src in [
        format!("def main():\n    x = 1\n    return x{}\n", " + x".repeat(n)),
        format!("def main():\n    x = 1\n    return x{}\n", ".a".repeat(n)),
        format!(
            "def main():\n    x = [1]\n    return x{}\n",
            "[0]".repeat(n)
        ),
    ] {
        let arena = Bump::new();
        if let Ok(module) = codemode_lang::parse(&arena, &src) {
            let resolved = codemode_lang::resolve(&arena, module, &names());
            assert!(resolved.is_ok(), "{:?}", resolved.err());
        }
    }
}

#[test]
fn long_elif_chains_do_not_recurse() {
    let mut src = String::from("def main(x):\n    if x == 0:\n        return 0\n");
    for i in 1..5000 {
        src.push_str(&format!("    elif x == {i}:\n        return y{i}\n"));
    }
    src.push_str("    else:\n        return x\n");
    let arena = Bump::new();
    if let Ok(module) = codemode_lang::parse(&arena, &src) {
        let err = codemode_lang::resolve(&arena, module, &names()).expect_err("undefined");
        assert_eq!(err.render(&src), "<codemode>:5:16: undefined: y1");
    }
}

// ---- large programs ---------------------------------------------------------

/// One function of the large program below: locals, a cell captured by a
/// closure, globals defined before and after it, and builtins.
fn unit(i: usize) -> String {
    format!(
        "def f{i}(items, k = LIMIT):\n    total = 0\n    seen = [x for x in items if x > k]\n    \
         def inner(n):\n        return total + n + len(seen)\n    \
         for x in seen:\n        total += inner(x)\n    return g{i}(total, records)\n\n\
         def g{i}(a, b):\n    return max(a, len(b))\n\nLIMIT_{i} = {i}\n\n"
    )
}

#[test]
fn a_large_program_resolves_as_its_parts_do() {
    // Past the size from which the resolver prefetches the tree (32 KB):
    // the same bindings, function by function, as in a small program.
    let small = format!("LIMIT = 1\n{}", unit(0));
    let mut large = String::from("LIMIT = 1\n");
    let mut i = 0;
    while large.len() < 200 << 10 {
        large.push_str(&unit(i));
        i += 1;
    }
    let count = i;
    let expect_total = with_module(&small, |m| bindings(m, "total"));
    let expect_inner = with_module(&small, |m| locals(m, "f0"));
    let expect_free = with_module(&small, |m| freevars(m, "inner"));
    assert_eq!(expect_total, vec![Cell(2), Free(0), Cell(2), Cell(2)]);
    with_module(&large, |m| {
        let idents = walk(m);
        let mut inner = 0;
        for (name, func) in &idents.functions {
            let scope = func.scope.get().expect("resolved");
            if *name == "inner" {
                let free: Vec<_> = scope
                    .freevars
                    .iter()
                    .map(|f| (f.name.to_string(), f.outer))
                    .collect();
                assert_eq!(free, expect_free);
                inner += 1;
            }
        }
        assert_eq!(inner, count);
        let totals = bindings(m, "total");
        assert_eq!(totals.len(), 4 * count);
        for chunk in totals.chunks(4) {
            assert_eq!(chunk, expect_total.as_slice());
        }
        assert_eq!(locals(m, "f0"), expect_inner);
        // `g{i}` is global `3 * i + 2` (after `LIMIT`, `f{i}`), used before its
        // definition; `records` is predeclared, `max` and `len` universal.
        let last = count - 1;
        assert_eq!(
            bindings(m, &format!("g{last}")),
            vec![Global(3 * last as u32 + 2); 2]
        );
        assert!(bindings(m, "records").iter().all(|b| *b == Predeclared(0)));
        assert!(bindings(m, "len").iter().all(|b| matches!(b, Universal(_))));
    });
    // An error at the very end is still found, at its position (starlark-ref
    // on this program, with `records` defined in a first line: "undefined:
    // nothing" at column 20 of the line after).
    let lines = large.lines().count();
    let bad = format!("{large}def h():\n    return LIMIT + nothing\n");
    assert_eq!(
        error(&bad),
        format!("<codemode>:{}:20: undefined: nothing", lines + 2)
    );
}
