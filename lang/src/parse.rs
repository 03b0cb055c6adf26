//! The parser entry point, the helpers the grammar's actions call to build
//! arena nodes, and the translation of lalrpop's errors into starlark-go's
//! wording.
//!
//! The grammar (`grammar/starlark.lalrpop`) is LR; starlark-go's parser is
//! recursive descent and words an error after the production it was in
//! ("got X, want ')'", "want primary expression", "not an identifier").
//! [`parse`] recovers that production from the set of tokens the LR state
//! expected and from the bracket context the lexer recorded, and reports
//! the error where starlark-go does: at the end of the offending token.
//!
//! The binary-operator levels are parsed flat and arranged by precedence
//! here ([`flat_op`]), which spares the LR parser a chain of unit
//! reductions per operand. Every node's depth is computed as it is built
//! and bounded by
//! [`MAX_NESTING`] (expressions) and `MAX_NESTING + 1` (statements, which
//! include the expressions inside them), so later recursive walks are
//! bounded.

use crate::ast::{
    self, AssignOp, BinOp, Clause, DictEntry, Expr, ExprKind, Function, Ident, Literal, Module,
    Param, ParamKind, Span, Stmt, StmtKind, UnaryOp,
};
use crate::lexer::{Bracket, LexError, Lexer, Spanned, TOO_DEEP};
use crate::token::Tok;
use crate::{Diagnostic, Hint, MAX_NESTING};
use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;
use lalrpop_util::ParseError;
use std::cell::{OnceCell, RefCell};

lalrpop_util::lalrpop_mod!(
    #[allow(
        clippy::all,
        clippy::pedantic,
        unused_qualifications,
        dead_code,
        unused_imports
    )]
    grammar,
    "/starlark.rs"
);

/// Parses `source` into a module allocated in `arena`. The module's
/// `scope` and `globals` are left for the resolver.
pub fn parse<'a>(arena: &'a Bump, source: &'a str) -> Result<&'a Module<'a>, Diagnostic> {
    if u32::try_from(source.len()).is_err() {
        return Err(Diagnostic::new(0, "source too large"));
    }
    // The operator stack holds the operators of the expressions being
    // read; room for the usual nesting up front.
    let mut ctx = Ctx {
        pending: RefCell::new(Vec::with_capacity(16)),
        ..Ctx::default()
    };
    let mut lexer = Lexer::new(arena, source);
    let result = grammar::FileParser::new().parse(arena, &ctx, &mut lexer);
    if let Some(e) = ctx.error.take() {
        // Any error the parser or the lexer met came after it.
        return Err(Diagnostic::new(e.pos as u32, e.message));
    }
    match result {
        Ok(stmts) => Ok(arena.alloc(Module {
            stmts: done(stmts),
            source,
            scope: OnceCell::new(),
            globals: OnceCell::new(),
        })),
        Err(e) => {
            // The parser's lexer keeps no context: replay the tokens it
            // handed out through one that does.
            let mut replay = Lexer::with_context(arena, source);
            replay.by_ref().take(lexer.emitted()).for_each(drop);
            let diagnostic = syntax_error(&e, &replay, source);
            let hint = python_hint(&e, replay, arena, source);
            Err(diagnostic.with_hint(hint))
        }
    }
}

/// State shared with the grammar's actions.
#[derive(Default)]
pub(crate) struct Ctx<'a> {
    /// Binary operators still waiting for their right operand, with their
    /// left operands, for the flat expression levels (see [`flat_op`]).
    /// Nested expressions complete before the enclosing one continues, so
    /// one stack serves them all.
    pending: RefCell<Vec<Pending<'a>>>,
    /// Positions of a run of `not`s read before their operand (see the
    /// grammar's `Nots`); they move to `pending` once the operand is read.
    nots: RefCell<Vec<usize>>,
    /// The first error an action found. The actions are infallible, which
    /// spares the generated parser an error path per reduction (with them
    /// its reduce function kept a 32 KiB stack frame): they record the
    /// error here and carry on with what they have. The parse goes on to
    /// the end of the source or its first syntax error, in time linear in
    /// the source as always, and the recorded error, the earliest, is the
    /// one reported.
    error: OnceCell<LexError>,
}

impl Ctx<'_> {
    /// Records an error found by an action; the first one stands.
    #[cold]
    #[inline(never)]
    fn fail(&self, pos: usize, message: String) {
        let _ = self.error.set(LexError::new(pos, message));
    }
}

/// `left op` waiting for the operand to its right; with no `left`, a
/// `not` (`op` is then unused).
pub(crate) struct Pending<'a> {
    left: Option<X<'a>>,
    op: BinOp,
    pos: usize,
}

impl Pending<'_> {
    fn precedence(&self) -> u8 {
        match self.left {
            Some(_) => precedence(self.op),
            None => NOT_PRECEDENCE,
        }
    }
}

/// Where a prefix `not` binds: between `and` and the comparisons.
const NOT_PRECEDENCE: u8 = 2;

/// A flat binary expression under construction: where its pending
/// operators start on [`Ctx::pending`], and its rightmost operand.
pub(crate) type Flat<'a> = (usize, X<'a>);

pub(crate) type PErr<'a> = ParseError<usize, Tok<'a>, LexError>;

/// An expression under construction with its depth (a leaf is 1).
pub(crate) struct X<'a> {
    /// Already in the arena: parser symbols stay small (lalrpop moves them
    /// on every reduction), and parents link to it without copying.
    pub e: &'a Expr<'a>,
    pub d: u32,
}

/// A statement under construction with its depth.
pub(crate) struct S<'a> {
    pub s: &'a Stmt<'a>,
    pub d: u32,
}

/// A list under construction. Its header lives in the arena so that the
/// parser's symbols have no drop glue (lalrpop drops every popped symbol
/// through a match on its variant) and stay small.
pub(crate) type Seq<'a, T> = &'a mut BVec<'a, T>;

pub(crate) fn seq<'a, T>(arena: &'a Bump, capacity: usize) -> Seq<'a, T> {
    arena.alloc(BVec::with_capacity_in(capacity, arena))
}

/// The finished list (the header, left empty, stays behind in the arena).
pub(crate) fn done<'a, T>(v: Seq<'a, T>) -> &'a [T] {
    let bump = v.bump();
    std::mem::replace(v, BVec::new_in(bump)).into_bump_slice()
}

/// Statements of a block and the depth of the deepest.
pub(crate) type Block<'a> = (Seq<'a, &'a Stmt<'a>>, u32);
/// Expressions of a display and the depth of the deepest.
pub(crate) type List<'a> = (Seq<'a, &'a Expr<'a>>, u32);
pub(crate) type Params<'a> = (Seq<'a, Param<'a>>, u32);
pub(crate) type Args<'a> = (Seq<'a, ast::Arg<'a>>, u32);
pub(crate) type Entries<'a> = (Seq<'a, DictEntry<'a>>, u32);
pub(crate) type Clauses<'a> = (Seq<'a, Clause<'a>>, u32);
/// A literal token with its byte range (in the arena, to keep the
/// parser's symbols small).
pub(crate) type LitTok<'a> = &'a (Literal<'a>, usize, usize);

/// One operand of `load` after the module.
#[derive(Clone, Copy)]
pub(crate) enum LoadItem<'a> {
    Plain(LitTok<'a>),
    Alias(&'a Ident<'a>, LitTok<'a>),
}

fn span(l: usize, r: usize) -> Span {
    Span::new(l as u32, r as u32)
}

/// Checks an expression depth against the limit.
fn expr_depth(ctx: &Ctx<'_>, d: u32, pos: usize) -> u32 {
    if d as usize > MAX_NESTING {
        ctx.fail(pos, TOO_DEEP.into());
    }
    d
}

/// Checks a statement depth: a statement may hold a full-depth expression.
fn stmt_depth(ctx: &Ctx<'_>, d: u32, pos: usize) -> u32 {
    if d as usize > MAX_NESTING + 1 {
        ctx.fail(pos, TOO_DEEP.into());
    }
    d
}

fn node<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    kind: ExprKind<'a>,
    l: u32,
    r: u32,
    d: u32,
    pos: usize,
) -> X<'a> {
    X {
        e: arena.alloc(Expr {
            kind,
            span: Span::new(l, r),
        }),
        d: expr_depth(ctx, d, pos),
    }
}

fn stmt<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    kind: StmtKind<'a>,
    l: u32,
    r: u32,
    d: u32,
    pos: usize,
) -> S<'a> {
    S {
        s: arena.alloc(Stmt {
            kind,
            span: Span::new(l, r),
        }),
        d: stmt_depth(ctx, d, pos),
    }
}

pub(crate) fn ident<'a>(arena: &'a Bump, name: &'a str, l: usize, r: usize) -> &'a Ident<'a> {
    arena.alloc(Ident::new(name, span(l, r)))
}

/// An identifier as an expression: the identifier lives in the node (one
/// allocation, not two).
pub(crate) fn ident_expr<'a>(arena: &'a Bump, name: &'a str, l: usize, r: usize) -> X<'a> {
    let sp = span(l, r);
    X {
        e: arena.alloc(Expr {
            kind: ExprKind::Ident(Ident::new(name, sp)),
            span: sp,
        }),
        d: 1,
    }
}

pub(crate) fn lit<'a>(arena: &'a Bump, v: Literal<'a>, l: usize, r: usize) -> X<'a> {
    X {
        e: arena.alloc(Expr {
            kind: ExprKind::Literal(v),
            span: span(l, r),
        }),
        d: 1,
    }
}

pub(crate) fn empty_list<'a>(
    arena: &'a Bump,
    kind: fn(&'a [&'a Expr<'a>]) -> ExprKind<'a>,
    l: usize,
    r: usize,
) -> X<'a> {
    X {
        e: arena.alloc(Expr {
            kind: kind(&[]),
            span: span(l, r),
        }),
        d: 1,
    }
}

pub(crate) fn empty_dict<'a>(arena: &'a Bump, l: usize, r: usize) -> X<'a> {
    X {
        e: arena.alloc(Expr {
            kind: ExprKind::Dict(&[]),
            span: span(l, r),
        }),
        d: 1,
    }
}

pub(crate) fn list1<'a>(arena: &'a Bump, x: X<'a>) -> List<'a> {
    let v = seq(arena, 2);
    v.push(x.e);
    (v, x.d)
}

pub(crate) fn list2<'a>(arena: &'a Bump, a: X<'a>, b: X<'a>) -> List<'a> {
    let v = seq(arena, 2);
    let d = a.d.max(b.d);
    v.push(a.e);
    v.push(b.e);
    (v, d)
}

pub(crate) fn push_x<'a>(mut l: List<'a>, x: X<'a>) -> List<'a> {
    l.1 = l.1.max(x.d);
    l.0.push(x.e);
    l
}

/// An unparenthesised tuple `a, b`.
pub(crate) fn tuple<'a>(arena: &'a Bump, ctx: &Ctx<'a>, l: List<'a>) -> X<'a> {
    let (items, d) = l;
    let items = done(items);
    let (start, end) = match (items.first(), items.last()) {
        (Some(a), Some(b)) => (a.span.start, b.span.end),
        _ => (0, 0),
    };
    node(
        arena,
        ctx,
        ExprKind::Tuple(items),
        start,
        end,
        d + 1,
        start as usize,
    )
}

/// `(x)`, `(x,)` or `(a, b, ...)`.
pub(crate) fn paren<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    l: usize,
    list: List<'a>,
    comma: bool,
    r: usize,
) -> X<'a> {
    let (items, d) = list;
    let inner = if let ([e], false) = (&items[..], comma) {
        X { e, d }
    } else {
        let items = done(items);
        let (start, end) = match (items.first(), items.last()) {
            (Some(a), Some(b)) => (a.span.start, b.span.end),
            _ => (l as u32, r as u32),
        };
        node(arena, ctx, ExprKind::Tuple(items), start, end, d + 1, l)
    };
    node(
        arena,
        ctx,
        ExprKind::Paren(inner.e),
        l as u32,
        r as u32,
        inner.d + 1,
        l,
    )
}

/// A list or dict display: `kind` of its finished items.
pub(crate) fn display<'a, T>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    kind: fn(&'a [T]) -> ExprKind<'a>,
    l: usize,
    items: (Seq<'a, T>, u32),
    r: usize,
) -> X<'a> {
    let (items, d) = items;
    node(arena, ctx, kind(done(items)), l as u32, r as u32, d + 1, l)
}

pub(crate) fn entry<'a>(k: X<'a>, colon: usize, v: X<'a>) -> (DictEntry<'a>, u32) {
    let d = k.d.max(v.d) + 1;
    let e = DictEntry {
        key: k.e,
        value: v.e,
        colon: colon as u32,
    };
    (e, d)
}

pub(crate) fn entries1<'a>(arena: &'a Bump, e: (DictEntry<'a>, u32)) -> Entries<'a> {
    let v = seq(arena, 2);
    v.push(e.0);
    (v, e.1)
}

pub(crate) fn push_entry<'a>(mut l: Entries<'a>, e: (DictEntry<'a>, u32)) -> Entries<'a> {
    l.1 = l.1.max(e.1);
    l.0.push(e.0);
    l
}

pub(crate) fn clauses1<'a>(arena: &'a Bump, c: (Clause<'a>, u32)) -> Clauses<'a> {
    let v = seq(arena, 2);
    v.push(c.0);
    (v, c.1)
}

pub(crate) fn push_clause<'a>(mut l: Clauses<'a>, c: (Clause<'a>, u32)) -> Clauses<'a> {
    l.1 = l.1.max(c.1);
    l.0.push(c.0);
    l
}

pub(crate) fn comp_for<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    p: usize,
    vars: X<'a>,
    iter: Flat<'a>,
) -> (Clause<'a>, u32) {
    let iter = flat_finish(arena, ctx, iter);
    let d = expr_depth(ctx, vars.d.max(iter.d) + 1, p);
    (
        Clause::For {
            vars: vars.e,
            iter: iter.e,
            for_pos: p as u32,
        },
        d,
    )
}

pub(crate) fn comp_if<'a>(ctx: &Ctx<'a>, p: usize, c: X<'a>) -> (Clause<'a>, u32) {
    let d = expr_depth(ctx, c.d + 1, p);
    (
        Clause::If {
            cond: c.e,
            if_pos: p as u32,
        },
        d,
    )
}

pub(crate) fn list_comp<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    l: usize,
    body: X<'a>,
    c: Clauses<'a>,
    r: usize,
) -> X<'a> {
    let d = body.d.max(c.1) + 1;
    let kind = ExprKind::ListComp {
        body: body.e,
        clauses: done(c.0),
    };
    node(arena, ctx, kind, l as u32, r as u32, d, l)
}

pub(crate) fn dict_comp<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    l: usize,
    e: (DictEntry<'a>, u32),
    c: Clauses<'a>,
    r: usize,
) -> X<'a> {
    let d = e.1.max(c.1) + 1;
    let kind = ExprKind::DictComp {
        key: e.0.key,
        value: e.0.value,
        clauses: done(c.0),
        colon: e.0.colon,
    };
    node(arena, ctx, kind, l as u32, r as u32, d, l)
}

pub(crate) fn cond<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    then: Flat<'a>,
    p: usize,
    c: Flat<'a>,
    els: X<'a>,
) -> X<'a> {
    // The condition's operators wait above the then-branch's.
    let c = flat_finish(arena, ctx, c);
    let then = flat_finish(arena, ctx, then);
    let d = then.d.max(c.d).max(els.d) + 1;
    let (l, r) = (then.e.span.start, els.e.span.end);
    let kind = ExprKind::Cond {
        then: then.e,
        cond: c.e,
        els: els.e,
        if_pos: p as u32,
    };
    node(arena, ctx, kind, l, r, d, p)
}

pub(crate) fn binary<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    l: X<'a>,
    op: BinOp,
    p: usize,
    r: X<'a>,
) -> X<'a> {
    let d = l.d.max(r.d) + 1;
    let (start, end) = (l.e.span.start, r.e.span.end);
    let kind = ExprKind::Binary {
        op,
        l: l.e,
        r: r.e,
        op_pos: p as u32,
    };
    node(arena, ctx, kind, start, end, d, p)
}

/// Binding strength of a binary operator, as in starlark-go (`not` would
/// sit at 2, between `and` and the comparisons).
fn precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 0,
        BinOp::And => 1,
        BinOp::Eq
        | BinOp::Ne
        | BinOp::Lt
        | BinOp::Le
        | BinOp::Gt
        | BinOp::Ge
        | BinOp::In
        | BinOp::NotIn => 3,
        BinOp::BitOr => 4,
        BinOp::BitXor => 5,
        BinOp::BitAnd => 6,
        BinOp::Shl | BinOp::Shr => 7,
        BinOp::Add | BinOp::Sub => 8,
        BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => 9,
    }
}

/// The first operand of a flat expression.
pub(crate) fn flat_start<'a>(ctx: &Ctx<'a>, x: X<'a>) -> Flat<'a> {
    (ctx.pending.borrow().len(), x)
}

/// The first `not` of a run: where the run starts on [`Ctx::nots`].
pub(crate) fn nots1(ctx: &Ctx<'_>, p: usize) -> usize {
    let mut nots = ctx.nots.borrow_mut();
    let base = nots.len();
    nots.push(p);
    base
}

pub(crate) fn nots_push(ctx: &Ctx<'_>, base: usize, p: usize) -> usize {
    ctx.nots.borrow_mut().push(p);
    base
}

/// Moves the `not`s from `base` on [`Ctx::nots`] to the operator stack,
/// outermost first, so that the innermost applies first.
fn push_nots<'a>(ctx: &Ctx<'a>, pending: &mut Vec<Pending<'a>>, base: usize) {
    let mut nots = ctx.nots.borrow_mut();
    for &pos in &nots[base..] {
        pending.push(Pending {
            left: None,
            op: BinOp::Or,
            pos,
        });
    }
    nots.truncate(base);
}

/// The first operand of a flat expression, after a run of `not`s.
pub(crate) fn flat_start_nots<'a>(ctx: &Ctx<'a>, nots: usize, x: X<'a>) -> Flat<'a> {
    let mut pending = ctx.pending.borrow_mut();
    let base = pending.len();
    push_nots(ctx, &mut pending, nots);
    (base, x)
}

/// Applies a waiting operator to its right operand `cur`.
fn apply<'a>(arena: &'a Bump, ctx: &Ctx<'a>, top: Pending<'a>, cur: X<'a>) -> X<'a> {
    match top.left {
        Some(left) => binary(arena, ctx, left, top.op, top.pos, cur),
        None => unary(arena, ctx, UnaryOp::Not, top.pos, cur),
    }
}

/// `... op`, as soon as the operator is read: operators waiting on the
/// stack that bind at least as tightly as `op` take the current operand
/// (left associativity), then `op` waits for the operand to its right.
/// Comparisons do not associate: meeting one while another waits at the
/// same level is starlark-go's error, at the end of the second operator,
/// reported (like starlark-go) before anything after the operator is read.
/// Returns where the flat expression starts on the stack.
pub(crate) fn flat_op<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    flat: Flat<'a>,
    op: (BinOp, usize, usize),
) -> usize {
    let (base, mut cur) = flat;
    let prec = precedence(op.0);
    let mut pending = ctx.pending.borrow_mut();
    while pending.len() > base {
        let top = match pending.last() {
            Some(t) if t.precedence() >= prec => t,
            _ => break,
        };
        if prec == 3 && top.precedence() == 3 {
            let msg = format!(
                "{} does not associate with {} (use parens)",
                top.op.as_str(),
                op.0.as_str()
            );
            // Reported; the comparisons are then taken left to right.
            ctx.fail(op.2, msg);
        }
        let Some(top) = pending.pop() else { break };
        cur = apply(arena, ctx, top, cur);
    }
    pending.push(Pending {
        left: Some(cur),
        op: op.0,
        pos: op.1,
    });
    base
}

/// The operand after `and`/`or` and a run of `not`s: the `not`s wait above
/// the operator (see [`flat_op`]).
pub(crate) fn flat_nots<'a>(ctx: &Ctx<'a>, base: usize, nots: usize, r: X<'a>) -> Flat<'a> {
    push_nots(ctx, &mut ctx.pending.borrow_mut(), nots);
    (base, r)
}

/// Completes a flat expression: every waiting operator takes its right
/// operand, innermost (tightest) first.
pub(crate) fn flat_finish<'a>(arena: &'a Bump, ctx: &Ctx<'a>, flat: Flat<'a>) -> X<'a> {
    let (base, mut cur) = flat;
    let mut pending = ctx.pending.borrow_mut();
    while pending.len() > base {
        let Some(top) = pending.pop() else { break };
        cur = apply(arena, ctx, top, cur);
    }
    cur
}

pub(crate) fn unary<'a>(arena: &'a Bump, ctx: &Ctx<'a>, op: UnaryOp, p: usize, x: X<'a>) -> X<'a> {
    let d = x.d + 1;
    let end = x.e.span.end;
    let kind = ExprKind::Unary {
        op,
        x: x.e,
        op_pos: p as u32,
    };
    node(arena, ctx, kind, p as u32, end, d, p)
}

pub(crate) fn dot<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    x: X<'a>,
    p: usize,
    name: &'a Ident<'a>,
) -> X<'a> {
    let d = x.d + 1;
    let (l, r) = (x.e.span.start, name.span.end);
    let kind = ExprKind::Dot {
        x: x.e,
        name,
        dot: p as u32,
    };
    node(arena, ctx, kind, l, r, d, p)
}

pub(crate) fn index<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    x: X<'a>,
    lb: usize,
    i: X<'a>,
    r: usize,
) -> X<'a> {
    let d = x.d.max(i.d) + 1;
    let l = x.e.span.start;
    let kind = ExprKind::Index {
        x: x.e,
        index: i.e,
        lbrack: lb as u32,
    };
    node(arena, ctx, kind, l, r as u32, d, lb)
}

pub(crate) fn slice<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    x: X<'a>,
    lb: usize,
    parts: [Option<X<'a>>; 3],
    r: usize,
) -> X<'a> {
    let mut d = x.d;
    let l = x.e.span.start;
    let [lo, hi, step] = parts.map(|p| {
        p.map(|p| {
            d = d.max(p.d);
            p.e
        })
    });
    let kind = ExprKind::Slice {
        x: x.e,
        lo,
        hi,
        step,
        lbrack: lb as u32,
    };
    node(arena, ctx, kind, l, r as u32, d + 1, lb)
}

/// An argument as the grammar reads it. It is never a parser symbol of
/// its own (the grammar inlines it), but lalrpop sizes its symbol type
/// for it anyway, so it stays as small as an `X` and a pointer.
pub(crate) enum ArgX<'a> {
    Positional(X<'a>),
    Named(&'a Ident<'a>, X<'a>),
    Star(u32, X<'a>),
    StarStar(u32, X<'a>),
}

fn arg<'a>(a: ArgX<'a>) -> (ast::Arg<'a>, u32) {
    match a {
        ArgX::Positional(v) => (ast::Arg::Positional(v.e), v.d),
        ArgX::Named(name, v) => (ast::Arg::Named { name, value: v.e }, v.d),
        ArgX::Star(star, v) => (ast::Arg::Star { value: v.e, star }, v.d),
        ArgX::StarStar(star, v) => (ast::Arg::StarStar { value: v.e, star }, v.d),
    }
}

pub(crate) fn args1<'a>(arena: &'a Bump, a: ArgX<'a>) -> Args<'a> {
    let (a, d) = arg(a);
    let v = seq(arena, 4);
    v.push(a);
    (v, d)
}

pub(crate) fn push_arg<'a>(mut l: Args<'a>, a: ArgX<'a>) -> Args<'a> {
    let (a, d) = arg(a);
    l.1 = l.1.max(d);
    l.0.push(a);
    l
}

pub(crate) fn call<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    f: X<'a>,
    lp: usize,
    args: Option<Args<'a>>,
    r: usize,
) -> X<'a> {
    let (args, ad): (&'a [ast::Arg<'a>], u32) = match args {
        Some((v, d)) => (done(v), d),
        None => (&[], 0),
    };
    let d = f.d.max(ad) + 1;
    let l = f.e.span.start;
    let kind = ExprKind::Call {
        func: f.e,
        args,
        lparen: lp as u32,
    };
    node(arena, ctx, kind, l, r as u32, d, lp)
}

/// A parameter as the grammar reads it: its kind, the position of its
/// `*` or `**` (if any) and its depth. Like [`ArgX`], small because
/// lalrpop sizes its symbols for it although the grammar inlines it; the
/// span follows from the kind.
pub(crate) type ParamX<'a> = (ParamKind<'a>, u32, u32);

fn param<'a>(p: ParamX<'a>) -> (Param<'a>, u32) {
    let (kind, star, d) = p;
    let span = match &kind {
        ParamKind::Required(n) => n.span,
        ParamKind::Optional(n, v) => Span::new(n.span.start, v.span.end),
        ParamKind::Star => Span::new(star, star + 1),
        ParamKind::Args(n) | ParamKind::Kwargs(n) => Span::new(star, n.span.end),
    };
    (Param { kind, span }, d)
}

pub(crate) fn params1<'a>(arena: &'a Bump, p: ParamX<'a>) -> Params<'a> {
    let (p, d) = param(p);
    let v = seq(arena, 4);
    v.push(p);
    (v, d)
}

pub(crate) fn push_param<'a>(mut l: Params<'a>, p: ParamX<'a>) -> Params<'a> {
    let (p, d) = param(p);
    l.1 = l.1.max(d);
    l.0.push(p);
    l
}

pub(crate) fn lambda<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    p: usize,
    params: Option<Params<'a>>,
    body: X<'a>,
) -> X<'a> {
    let (params, pd): (&'a [Param<'a>], u32) = match params {
        Some((v, d)) => (done(v), d),
        None => (&[], 0),
    };
    // The lambda, its implicit `return`, and the body.
    let d = body.d.max(pd) + 2;
    let end = body.e.span.end;
    let sp = body.e.span;
    let ret: &'a Stmt<'a> = arena.alloc(Stmt {
        kind: StmtKind::Return(Some(body.e)),
        span: sp,
    });
    let func = arena.alloc(Function {
        name: "lambda",
        pos: p as u32,
        params,
        body: std::slice::from_ref(arena.alloc(ret)),
        scope: OnceCell::new(),
    });
    node(arena, ctx, ExprKind::Lambda(func), p as u32, end, d, p)
}

pub(crate) fn block1<'a>(arena: &'a Bump, s: S<'a>) -> Block<'a> {
    let v = seq(arena, 4);
    v.push(s.s);
    (v, s.d)
}

pub(crate) fn push_stmt<'a>(mut b: Block<'a>, s: S<'a>) -> Block<'a> {
    b.1 = b.1.max(s.d);
    b.0.push(s.s);
    b
}

/// Appends a top-level statement.
pub(crate) fn push_top<'a>(b: Seq<'a, &'a Stmt<'a>>, s: S<'a>) -> Seq<'a, &'a Stmt<'a>> {
    b.push(s.s);
    b
}

pub(crate) fn simple<'a>(arena: &'a Bump, kind: StmtKind<'a>, l: usize, r: usize) -> S<'a> {
    S {
        s: arena.alloc(Stmt {
            kind,
            span: span(l, r),
        }),
        d: 1,
    }
}

pub(crate) fn ret<'a>(arena: &'a Bump, ctx: &Ctx<'a>, l: usize, x: X<'a>) -> S<'a> {
    let (r, d) = (x.e.span.end, x.d + 1);
    stmt(arena, ctx, StmtKind::Return(Some(x.e)), l as u32, r, d, l)
}

pub(crate) fn expr_stmt<'a>(arena: &'a Bump, ctx: &Ctx<'a>, x: X<'a>) -> S<'a> {
    let (sp, d) = (x.e.span, x.d + 1);
    stmt(
        arena,
        ctx,
        StmtKind::Expr(x.e),
        sp.start,
        sp.end,
        d,
        sp.start as usize,
    )
}

pub(crate) fn assign<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    lhs: X<'a>,
    op: (AssignOp, usize),
    rhs: X<'a>,
) -> S<'a> {
    let (l, r) = (lhs.e.span.start, rhs.e.span.end);
    let d = lhs.d.max(rhs.d) + 1;
    let kind = StmtKind::Assign {
        lhs: lhs.e,
        op: op.0,
        op_pos: op.1 as u32,
        rhs: rhs.e,
    };
    stmt(arena, ctx, kind, l, r, d, op.1)
}

fn block_end(b: &[&Stmt<'_>], default: u32) -> u32 {
    b.last().map_or(default, |s| s.span.end)
}

pub(crate) fn def<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    p: usize,
    name: &'a Ident<'a>,
    params: Option<Params<'a>>,
    body: Block<'a>,
) -> S<'a> {
    let (params, pd): (&'a [Param<'a>], u32) = match params {
        Some((v, d)) => (done(v), d),
        None => (&[], 0),
    };
    let d = body.1.max(pd) + 1;
    let body = done(body.0);
    let end = block_end(body, name.span.end);
    let func = arena.alloc(Function {
        name: name.name,
        pos: p as u32,
        params,
        body,
        scope: OnceCell::new(),
    });
    stmt(
        arena,
        ctx,
        StmtKind::Def { name, func },
        p as u32,
        end,
        d,
        p,
    )
}

pub(crate) fn if_stmt<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    p: usize,
    c: X<'a>,
    then: Block<'a>,
    els: (&'a [&'a Stmt<'a>], u32),
) -> S<'a> {
    let d = c.d.max(then.1).max(els.1) + 1;
    let then = done(then.0);
    let end = block_end(els.0, block_end(then, c.e.span.end));
    let kind = StmtKind::If {
        cond: c.e,
        then,
        els: els.0,
    };
    stmt(arena, ctx, kind, p as u32, end, d, p)
}

/// An `elif` clause: an `If` as the only statement of the `else` branch.
pub(crate) fn elif<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    p: usize,
    c: X<'a>,
    then: Block<'a>,
    els: (&'a [&'a Stmt<'a>], u32),
) -> (&'a [&'a Stmt<'a>], u32) {
    let s = if_stmt(arena, ctx, p, c, then, els);
    (std::slice::from_ref(arena.alloc(s.s)), s.d)
}

pub(crate) fn for_stmt<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    p: usize,
    vars: X<'a>,
    iter: X<'a>,
    body: Block<'a>,
) -> S<'a> {
    let d = vars.d.max(iter.d).max(body.1) + 1;
    let body = done(body.0);
    let end = block_end(body, iter.e.span.end);
    let kind = StmtKind::For {
        vars: vars.e,
        iter: iter.e,
        body,
    };
    stmt(arena, ctx, kind, p as u32, end, d, p)
}

/// A `while` loop: parsed so that the resolver can reject it with
/// starlark-go's wording.
pub(crate) fn while_stmt<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    p: usize,
    c: X<'a>,
    body: Block<'a>,
) -> S<'a> {
    let d = c.d.max(body.1) + 1;
    let body = done(body.0);
    let end = block_end(body, c.e.span.end);
    let kind = StmtKind::While { cond: c.e, body };
    stmt(arena, ctx, kind, p as u32, end, d, p)
}

/// The operands of `load` read so far: the module's name and the
/// bindings.
pub(crate) type LoadOperands<'a> = (&'a str, Seq<'a, (&'a Ident<'a>, &'a str)>);

/// The module operand of `load`, which must be a string.
pub(crate) fn load_module<'a>(arena: &'a Bump, ctx: &Ctx<'a>, m: LitTok<'a>) -> LoadOperands<'a> {
    let &(lit, _, end) = m;
    let module = match lit {
        Literal::String(name) => name,
        _ => {
            ctx.fail(
                end,
                "first operand of load statement must be a string literal".into(),
            );
            ""
        }
    };
    (module, seq(arena, 4))
}

/// A binding operand of `load`: `"name"` or `local="name"`.
pub(crate) fn load_item<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    o: LoadOperands<'a>,
    item: LoadItem<'a>,
) -> LoadOperands<'a> {
    match item {
        LoadItem::Plain(&(Literal::String(name), ls, le)) => {
            // starlark-go places the binding one column into the literal.
            o.1.push((ident(arena, name, ls + 1, le), name));
        }
        LoadItem::Plain(&(lit, _, le)) => {
            let got = Tok::Lit(lit).describe();
            let msg = format!("load operand must be \"name\" or localname=\"name\" (got {got})");
            ctx.fail(le, msg);
        }
        LoadItem::Alias(id, &(Literal::String(name), _, _)) => o.1.push((id, name)),
        LoadItem::Alias(id, &(_, _, le)) => {
            let msg = format!(
                "original name of loaded symbol must be quoted: {}=\"originalname\"",
                id.name
            );
            ctx.fail(le, msg);
        }
    }
    o
}

pub(crate) fn load<'a>(
    arena: &'a Bump,
    ctx: &Ctx<'a>,
    l: usize,
    lparen: usize,
    operands: LoadOperands<'a>,
    r: usize,
) -> S<'a> {
    let (module, names) = operands;
    if names.is_empty() {
        ctx.fail(
            lparen,
            "load statement must import at least 1 symbol".into(),
        );
    }
    let kind = StmtKind::Load {
        module,
        names: done(names),
    };
    stmt(arena, ctx, kind, l as u32, r as u32, 1, l)
}

/// How starlark-go names an expected terminal of the grammar.
fn terminal_name(t: &str) -> String {
    let t = t.trim_matches('"');
    match t {
        "NEWLINE" => "newline".into(),
        "EOF" => "end of file".into(),
        "INDENT" => "indent".into(),
        "OUTDENT" => "outdent".into(),
        "IDENT" => "identifier".into(),
        "LIT" => "primary expression".into(),
        _ if t.starts_with(|c: char| c.is_ascii_alphabetic()) => t.into(),
        _ => format!("'{t}'"),
    }
}

/// Turns a lalrpop error into starlark-go's diagnostic.
fn syntax_error<'a>(err: &PErr<'a>, lx: &Lexer<'a, true>, src: &str) -> Diagnostic {
    let (got, pos, expected) = match err {
        ParseError::User { error } => {
            return Diagnostic::new(error.pos as u32, error.message.clone())
        }
        ParseError::InvalidToken { location } => {
            return Diagnostic::new(*location as u32, "invalid token")
        }
        ParseError::ExtraToken { token: (_, t, r) } => {
            return Diagnostic::new(*r as u32, format!("got {}, want end of file", t.describe()))
        }
        ParseError::UnrecognizedEof { expected, .. } => (None, src.len(), expected),
        ParseError::UnrecognizedToken {
            token: (_, t, r),
            expected,
        } => (Some(*t), *r, expected),
    };
    let message = describe(got, expected, lx);
    match message {
        Wording::At(p, m) => Diagnostic::new(p as u32, m),
        Wording::Here(m) => Diagnostic::new(pos as u32, m),
    }
}

/// The hint for a syntax error that a Python construct caused, read from
/// the offending token, the tokens around it and the bracket it is in.
/// `lx` has handed out every token up to the offending one (the newest).
fn python_hint<'a>(
    err: &PErr<'a>,
    mut lx: Lexer<'a, true>,
    arena: &'a Bump,
    src: &'a str,
) -> Option<Hint> {
    let (start, got, end) = match err {
        ParseError::UnrecognizedToken { token, .. } | ParseError::ExtraToken { token } => *token,
        _ => return None,
    };
    let prev = lx.recent()[1];
    let prev_ends_operand = prev.is_some_and(|(_, t, _)| t.ends_operand());
    match got {
        Tok::Illegal(word) => return Hint::for_reserved(word),
        Tok::StarStar if prev_ends_operand => return Some(Hint::Power),
        Tok::StarStar if lx.ctx == Some(Bracket::Dict) => return Some(Hint::DictUnpack),
        // `f"..."` scans as the identifier `f` touching a string.
        Tok::Lit(Literal::String(_) | Literal::Bytes(_)) => {
            if let Some((_, Tok::Ident(prefix), prev_end)) = prev {
                let f_prefix = matches!(prefix.to_ascii_lowercase().as_str(), "f" | "rf" | "fr");
                if f_prefix && prev_end == start {
                    return Some(Hint::FString);
                }
            }
        }
        // `:=` scans as `:` touching `=`.
        Tok::Colon => {
            if let Some(Ok((next_start, Tok::Eq, _))) = lx.next() {
                if next_start == end {
                    return Some(Hint::Walrus);
                }
            }
        }
        // The first entry of a brace display without a `:` is a set.
        Tok::Comma | Tok::RBrace | Tok::For
            if lx.ctx == Some(Bracket::Dict)
                && prev_ends_operand
                && !display_has_colon(arena, src, lx.emitted()) =>
        {
            return Some(Hint::Set);
        }
        _ => {}
    }
    // `async def`, `async for`, `await f()`.
    match (prev, got) {
        (Some((_, Tok::Ident("async"), _)), Tok::Def | Tok::For)
        | (Some((_, Tok::Ident("await"), _)), Tok::Ident(_)) => Some(Hint::Async),
        _ => None,
    }
}

/// Whether the innermost bracket open at the `count`th token of `src`
/// (the offending one, which may close it) holds a `:` of its own before
/// that token.
fn display_has_colon(arena: &Bump, src: &str, count: usize) -> bool {
    // One flag per open bracket; bracket depth is bounded by the lexer.
    let mut colons: Vec<bool> = Vec::new();
    for token in Lexer::new(arena, src).take(count.saturating_sub(1)) {
        match token {
            Ok((_, Tok::LParen | Tok::LBrack | Tok::LBrace, _)) => colons.push(false),
            Ok((_, Tok::RParen | Tok::RBrack | Tok::RBrace, _)) => {
                colons.pop();
            }
            Ok((_, Tok::Colon, _)) => {
                if let Some(seen) = colons.last_mut() {
                    *seen = true;
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    colons.last().copied().unwrap_or(false)
}

enum Wording {
    /// A message at the end of the offending token.
    Here(String),
    /// A message at another position.
    At(usize, String),
}

/// Words a parse error like starlark-go's recursive-descent parser.
fn describe<'a>(got: Option<Tok<'a>>, expected: &[String], lx: &Lexer<'a, true>) -> Wording {
    let has = |name: &str| expected.iter().any(|e| e.trim_matches('"') == name);
    let got_name = got.map_or("end of file", |t| t.describe());
    let is_eof = matches!(got, None | Some(Tok::EofNewline));
    // The tokens before the offending one, newest first, and the bracket
    // the offending token was read in.
    let recent = lx.recent();
    let (before, ctx, depth): (&[Option<Spanned<'a>>], _, _) = if got.is_some() {
        (&recent[1..], lx.ctx, lx.ctx_depth)
    } else {
        (&recent[..], None, 0)
    };
    let prev = before.first().copied().flatten();
    let prev_tok = prev.map(|p| p.1);
    let want = |w: &str| Wording::Here(format!("got {got_name}, want {w}"));

    if ctx == Some(Bracket::Load) {
        match prev_tok {
            Some(Tok::LParen) => {
                return Wording::Here(
                    "first operand of load statement must be a string literal".into(),
                )
            }
            Some(Tok::Comma) => {
                return Wording::Here(format!(
                    "load operand must be \"name\" or localname=\"name\" (got {got_name})"
                ))
            }
            Some(Tok::Ident(id)) => {
                return Wording::Here(format!(
                    "load operand must be \"{id}\" or {id}=\"originalname\" (want '=' after {id})"
                ))
            }
            Some(Tok::Eq) => {
                let id = match before.get(1).copied().flatten() {
                    Some((_, Tok::Ident(id), _)) => id,
                    _ => "",
                };
                return Wording::Here(format!(
                    "original name of loaded symbol must be quoted: {id}=\"originalname\""
                ));
            }
            _ if is_eof => return want("')'"),
            _ => return want("','"),
        }
    }
    if has("LIT") {
        let terminator = is_eof
            || matches!(
                got,
                Some(Tok::Newline | Tok::Eq | Tok::RBrace | Tok::RBrack | Tok::RParen | Tok::Semi)
            );
        if let Some((comma, Tok::Comma, _)) = prev {
            if terminator && matches!(ctx, None | Some(Bracket::Index)) {
                return Wording::At(comma, "unparenthesized tuple with trailing comma".into());
            }
        }
        // A trailing comma is fine in a parenthesised or bracketed list,
        // which then wants its closing bracket.
        if matches!(prev_tok, Some(Tok::Comma)) && terminator {
            match ctx {
                Some(Bracket::Group) => return want("')'"),
                Some(Bracket::List) => return want("']'"),
                _ => {}
            }
        }
        if ctx == Some(Bracket::Call) && matches!(prev_tok, Some(Tok::LParen)) && is_eof {
            return want("')'");
        }
        return want("primary expression");
    }
    if has("IDENT") {
        if ctx == Some(Bracket::DefParams)
            && matches!(prev_tok, Some(Tok::LParen))
            && (is_eof || matches!(got, Some(Tok::Colon)))
        {
            return want("')'");
        }
        if matches!(prev_tok, Some(Tok::Star)) && has(",") {
            return want("','");
        }
        return Wording::Here("not an identifier".into());
    }
    if has("INDENT") {
        return want("indent");
    }
    if has("else") {
        if let Some(p) = lx.last_if(depth) {
            return Wording::At(p, "conditional expression without else clause".into());
        }
    }
    // After the variables of a `for` (comparisons also accept `in`).
    if has("in") && !has("==") {
        return want("in");
    }
    // After a parameter name: the parameter loop wants a comma, or at the
    // end of the file the token that closes the list.
    if has("=") && has(",") && !has("NEWLINE") {
        if is_eof {
            return want(if has(")") { "')'" } else { "':'" });
        }
        return want("','");
    }
    // After a complete expression: what the enclosing production of
    // starlark-go's parser consumes next.
    match ctx {
        Some(b @ (Bracket::List | Bracket::Dict)) if has("for") && !has(",") => {
            let close = if b == Bracket::List { ']' } else { '}' };
            return want(&format!("'{close}', for, or if"));
        }
        None if has(":") => return want("':'"),
        None if has("NEWLINE") => return want("newline"),
        Some(Bracket::Group) if has(")") => return want("')'"),
        Some(Bracket::Call) if matches!(got, Some(Tok::Eq)) => {
            return Wording::Here("keyword argument must have form name=expr".into())
        }
        Some(Bracket::Call | Bracket::DefParams) if is_eof => return want("')'"),
        Some(Bracket::Call | Bracket::DefParams) if has(",") => return want("','"),
        Some(Bracket::List | Bracket::Index) if has("]") => return want("']'"),
        Some(Bracket::Dict) if has(":") && !has("}") => return want("':'"),
        Some(Bracket::Dict) if has("}") => return want("'}'"),
        _ => {}
    }
    if expected.len() == 1 {
        return want(&terminal_name(&expected[0]));
    }
    if has(",") {
        if is_eof && has(")") {
            return want("')'");
        }
        if is_eof && has(":") {
            return want("':'");
        }
        return want("','");
    }
    match expected.first() {
        Some(t) => want(&terminal_name(t)),
        None => Wording::Here(format!("got {got_name}")),
    }
}
