//! Error positions as starlark-go reports them. starlark-go gives a
//! position to only some instructions and lets the others inherit the
//! one laid out before them, so the position of an error depends on the
//! order in which it lays out code: these functions compute, from the
//! syntax tree, the position starlark-go would report where the
//! compiler's own instruction order differs (a function's entry, what
//! follows a conditional or a comprehension, a chain of `+`).

use codemode_lang::ast::*;

/// The position starlark-go gives the first instruction of a function's
/// body, where errors of entering the function are reported (`None`: the
/// `def`'s). starlark-go records a position when it loads a name that is not
/// universal, before an operator, index or call that can fail, and before a
/// slice or a function (whose defaults can fail); an instruction takes the
/// latest one recorded. So it is the position of the first such point
/// reached before the first instruction is emitted: a literal, a universal
/// name (`len`, `True`), or a dict display or comprehension (whose empty
/// container comes first) leave the `def`'s. `pass` emits nothing.
pub(super) fn first_ident_pos(body: &[&Stmt<'_>]) -> Option<Pos> {
    let first = body.iter().find(|s| !matches!(s.kind, StmtKind::Pass))?;
    match &first.kind {
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => first_leaf(e),
        StmtKind::Assign {
            lhs,
            op: AssignOp::Aug(_),
            ..
        } => first_leaf(lhs),
        StmtKind::Assign { rhs, .. } => first_leaf(rhs),
        StmtKind::If { cond, .. } => first_leaf(cond),
        StmtKind::For { iter, .. } => first_leaf(iter),
        StmtKind::Def { func, .. } => Some(func.pos),
        _ => None,
    }
}

pub(super) fn first_leaf(e: &Expr<'_>) -> Option<Pos> {
    match &e.kind {
        ExprKind::Ident(id) => match id.binding.get() {
            Binding::Universal(_) => None,
            _ => Some(id.span.start),
        },
        ExprKind::Binary { op: BinOp::Add, .. } => plus_first_leaf(e),
        ExprKind::Paren(x)
        | ExprKind::Unary { x, .. }
        | ExprKind::Binary { l: x, .. }
        | ExprKind::Call { func: x, .. }
        | ExprKind::Index { x, .. }
        | ExprKind::Dot { x, .. }
        | ExprKind::Cond { cond: x, .. } => first_leaf(x),
        ExprKind::Slice { x, lbrack, .. } => first_leaf(x).or(Some(*lbrack)),
        ExprKind::Lambda(func) => Some(func.pos),
        ExprKind::List(items) | ExprKind::Tuple(items) => items.first().and_then(|e| first_leaf(e)),
        _ => None,
    }
}

/// The position of the last instruction starlark-go gives a position among
/// those it lays out for `e` before the code that follows `e`; `None` when
/// there is none (a literal, a universal name, an empty display).
/// starlark-go gives a position to the instruction that loads a name that is
/// not universal, to operators, calls, indexing, attributes, a dict entry's
/// insertion, a comprehension's `for`, and to the first instruction of a
/// slice or a function; every other instruction inherits the position of
/// the one laid out before it. A slice's error is reported with the
/// position its instruction inherits. Branches are laid out with the "false"
/// target right after the test: `a if c else b` as `c`, `b`, then what
/// follows (the `a` branch is placed elsewhere); `x and y` as `x`, then
/// what follows; `x or y` as `x`, `y`, then what follows.
pub(super) fn last_pos(e: &Expr<'_>) -> Option<Pos> {
    let last = |items: &[&Expr<'_>]| items.iter().rev().find_map(|x| last_pos(x));
    match &e.kind {
        ExprKind::Ident(id) => match id.binding.get() {
            Binding::Universal(_) => None,
            _ => Some(id.span.start),
        },
        ExprKind::Literal(_) => None,
        ExprKind::Paren(x) => last_pos(x),
        ExprKind::List(items) | ExprKind::Tuple(items) => last(items),
        ExprKind::Dict(entries) => entries.last().map(|en| en.colon),
        ExprKind::ListComp { body, clauses } => {
            let mut later = Vec::new();
            let main = main_path(body, &mut later).or_else(|| clauses_pos(clauses));
            deferred_pos(later).or(main)
        }
        ExprKind::DictComp {
            key, value, colon, ..
        } => {
            let mut later = Vec::new();
            main_path(key, &mut later);
            main_path(value, &mut later);
            deferred_pos(later).or(Some(*colon))
        }
        ExprKind::Cond {
            then, cond, els, ..
        } => {
            let (else_first, test) = test_layout(cond);
            let first = if else_first { els } else { then };
            last_pos(first).or(test)
        }
        ExprKind::Lambda(func) => {
            let defaults = func.params.iter().rev().find_map(|p| match p.kind {
                ParamKind::Optional(_, d) => last_pos(d),
                _ => None,
            });
            defaults.or(Some(func.pos))
        }
        ExprKind::Call { lparen, .. } => Some(*lparen),
        ExprKind::Index { lbrack, .. } => Some(*lbrack),
        ExprKind::Slice {
            x,
            lo,
            hi,
            step,
            lbrack,
        } => [Some(*x), *lo, *hi, *step]
            .into_iter()
            .flatten()
            .filter_map(last_pos)
            .last()
            .or(Some(*lbrack)),
        ExprKind::Dot { dot, .. } => Some(*dot),
        ExprKind::Binary {
            op: BinOp::And, l, ..
        } => last_pos(l),
        ExprKind::Binary {
            op: BinOp::Or,
            l,
            r,
            ..
        } => last_pos(r).or_else(|| last_pos(l)),
        ExprKind::Binary { op: BinOp::Add, .. } => plus_pos(e),
        ExprKind::Binary { op_pos, .. } | ExprKind::Unary { op_pos, .. } => Some(*op_pos),
    }
}

/// The last position laid out for `e` inside a loop body, on the path
/// that falls through its branches; the branches laid out elsewhere (the
/// `then` of a conditional whose "false" branch follows its test, the other
/// one otherwise, the `y` of `x and y`) are pushed onto `later`. Other
/// expressions are taken whole ([`last_pos`]).
pub(super) fn main_path<'a, 'h>(e: &'a Expr<'h>, later: &mut Vec<&'a Expr<'h>>) -> Option<Pos> {
    match &e.kind {
        ExprKind::Paren(x) => main_path(x, later),
        ExprKind::Cond {
            then, cond, els, ..
        } => {
            let (else_first, test) = test_layout(cond);
            let (first, other) = if else_first { (els, then) } else { (then, els) };
            later.push(other);
            main_path(first, later).or(test)
        }
        ExprKind::Binary {
            op: BinOp::And,
            l,
            r,
            ..
        } => {
            let p = main_path(l, later);
            later.push(r);
            p
        }
        ExprKind::Binary {
            op: BinOp::Or,
            l,
            r,
            ..
        } => {
            let p = main_path(l, later);
            main_path(r, later).or(p)
        }
        _ => last_pos(e),
    }
}

/// The last position laid out by the branches a comprehension's body put
/// aside ([`main_path`]): starlark-go lays them out after the loop body and
/// before the loop's exit, from a stack (the last put aside first, each
/// laying out its own put-aside branches right after it), so what follows
/// the comprehension inherits the last position among them.
pub(super) fn deferred_pos(mut later: Vec<&Expr<'_>>) -> Option<Pos> {
    let mut last = None;
    while let Some(e) = later.pop() {
        if let Some(p) = main_path(e, &mut later) {
            last = Some(p);
        }
    }
    last
}

/// How starlark-go lays out the test `cond` of a conditional: whether the
/// "false" branch comes right after it (else the "true" branch does), and
/// the last position given on the way there. `not x` swaps the branches;
/// `x and y` goes to the "false" branch right after `x`; `x or y` tests `y`
/// right after `x`.
pub(super) fn test_layout(cond: &Expr<'_>) -> (bool, Option<Pos>) {
    match &cond.kind {
        ExprKind::Unary {
            op: UnaryOp::Not,
            x,
            ..
        } => {
            let (else_first, pos) = test_layout(x);
            (!else_first, pos)
        }
        ExprKind::Binary {
            op: BinOp::And, l, ..
        } => (true, last_pos(l)),
        ExprKind::Binary {
            op: BinOp::Or,
            l,
            r,
            ..
        } => {
            let (else_first, pos) = test_layout(r);
            (else_first, pos.or_else(|| last_pos(l)))
        }
        _ => (true, last_pos(cond)),
    }
}

/// The last position a comprehension's clauses record (each `for` records
/// its own after its iterable).
pub(super) fn clauses_pos(clauses: &[Clause<'_>]) -> Option<Pos> {
    clauses.iter().rev().find_map(|c| match c {
        Clause::For { for_pos, .. } => Some(*for_pos),
        Clause::If { cond, .. } => last_pos(cond),
    })
}

/// A chain of `+` as starlark-go compiles it: the summands in order, with
/// each run of adjacent string literals, bytes literals, list displays or
/// tuple displays joined into one (`[a] + [b]` is compiled as `[a, b]`).
/// Each item is the joined summands and the position of the `+` before the
/// first of them (`None` for the first item).
pub(super) fn plus_runs<'a, 'h>(e: &'a Expr<'h>) -> Vec<(Vec<&'a Expr<'h>>, Option<Pos>)> {
    let mut summands: Vec<(&'a Expr<'h>, Option<Pos>)> = Vec::new();
    let mut cur = e;
    while let ExprKind::Binary {
        op: BinOp::Add,
        l,
        r,
        op_pos,
    } = &unparen(cur).kind
    {
        summands.push((unparen(r), Some(*op_pos)));
        cur = l;
    }
    summands.push((unparen(cur), None));
    summands.reverse();
    let kind = |x: &Expr<'_>| match x.kind {
        ExprKind::Literal(Literal::String(_)) => 1,
        ExprKind::Literal(Literal::Bytes(_)) => 2,
        ExprKind::List(_) => 3,
        ExprKind::Tuple(_) => 4,
        _ => 0,
    };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < summands.len() {
        let k = kind(summands[i].0);
        let mut j = i + 1;
        while k != 0 && j < summands.len() && kind(summands[j].0) == k {
            j += 1;
        }
        runs.push((summands[i..j].iter().map(|s| s.0).collect(), summands[i].1));
        i = j;
    }
    runs
}

/// The elements of a joined run of displays, or the run's one summand.
pub(super) fn run_items<'a, 'h>(run: &[&'a Expr<'h>]) -> Vec<&'a Expr<'h>> {
    if run.len() == 1 {
        return run.to_vec();
    }
    run.iter()
        .flat_map(|x| match &x.kind {
            ExprKind::List(items) | ExprKind::Tuple(items) => items.to_vec(),
            _ => Vec::new(),
        })
        .collect()
}

/// [`last_pos`] of a chain of `+`: the `+` before its last joined summand,
/// or, when the chain joins into one summand, that summand's.
pub(super) fn plus_pos(e: &Expr<'_>) -> Option<Pos> {
    let runs = plus_runs(e);
    match runs.as_slice() {
        [(only, _)] => run_items(only).iter().rev().find_map(|x| last_pos(x)),
        [.., (_, pos)] => *pos,
        [] => None,
    }
}

/// [`first_leaf`] of a chain of `+`: its first joined summand's.
pub(super) fn plus_first_leaf(e: &Expr<'_>) -> Option<Pos> {
    let runs = plus_runs(e);
    let (first, _) = runs.first()?;
    match first.as_slice() {
        [only] => first_leaf(only),
        _ => run_items(first).first().and_then(|x| first_leaf(x)),
    }
}

pub(super) fn unparen<'a, 'h>(e: &'a Expr<'h>) -> &'a Expr<'h> {
    match &e.kind {
        ExprKind::Paren(x) => unparen(x),
        _ => e,
    }
}
