//! The abstract syntax tree of the Starlark surface.
//!
//! Every node lives in one `bumpalo` arena owned by the caller and borrows
//! from it (and from the source text) for `'a`. Nodes carry byte offsets
//! into the source (`Pos`, `Span`); line and column are computed on demand
//! by [`crate::LineIndex`]. The resolver fills the `Cell`/`OnceCell` fields
//! (identifier bindings, function scopes) in place, so the tree is built
//! once and annotated without copying. The parser guarantees that no
//! expression or block is nested deeper than [`crate::MAX_NESTING`], so
//! every recursive walk over the tree is bounded.

use std::cell::{Cell, OnceCell};

/// A byte offset into the source text.
pub type Pos = u32;

/// A half-open byte range `[start, end)` of the source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: Pos,
    pub end: Pos,
}

impl Span {
    pub fn new(start: Pos, end: Pos) -> Span {
        Span { start, end }
    }
}

/// A parsed file: the statements of the top level.
#[derive(Debug)]
pub struct Module<'a> {
    pub stmts: &'a [&'a Stmt<'a>],
    /// The whole source text the module was parsed from. The resolver needs
    /// it to render the earlier position that some messages cite
    /// (`cannot reassign global x declared at <codemode>:1:1`).
    pub source: &'a str,
    /// The top level's own scope: its locals are the variables of
    /// comprehensions written at the top level. Filled by the resolver.
    pub scope: OnceCell<Scope<'a>>,
    /// Names of the module's globals, in slot order (`Binding::Global(i)` is
    /// `globals[i]`). Filled by the resolver.
    pub globals: OnceCell<&'a [&'a str]>,
}

/// A statement and the position starlark-go attributes to it.
#[derive(Debug)]
pub struct Stmt<'a> {
    pub kind: StmtKind<'a>,
    pub span: Span,
}

#[derive(Debug)]
pub enum StmtKind<'a> {
    /// `def name(params): body`. `Stmt::span.start` is the `def` keyword.
    Def {
        name: &'a Ident<'a>,
        func: &'a Function<'a>,
    },
    /// An expression evaluated for its effect.
    Expr(&'a Expr<'a>),
    /// `lhs = rhs` or `lhs op= rhs`. `op_pos` is the position of the
    /// assignment operator.
    Assign {
        lhs: &'a Expr<'a>,
        op: AssignOp,
        op_pos: Pos,
        rhs: &'a Expr<'a>,
    },
    /// `if cond: then else: els`; an `elif` chain is a nested `If` as the
    /// only statement of `els`.
    If {
        cond: &'a Expr<'a>,
        then: &'a [&'a Stmt<'a>],
        els: &'a [&'a Stmt<'a>],
    },
    /// `for vars in iter: body`. `vars` is an identifier, or a tuple/list
    /// (possibly parenthesised) of targets.
    For {
        vars: &'a Expr<'a>,
        iter: &'a Expr<'a>,
        body: &'a [&'a Stmt<'a>],
    },
    /// `while cond: body`: parsed only so that the resolver can reject it
    /// with starlark-go's wording (default file options have no `while`).
    While {
        cond: &'a Expr<'a>,
        body: &'a [&'a Stmt<'a>],
    },
    /// `return` with an optional value.
    Return(Option<&'a Expr<'a>>),
    Break,
    Continue,
    Pass,
    /// `load("module", "name", alias="name")`: parsed so that the resolver
    /// can reject it with starlark-go's wording.
    Load {
        module: &'a str,
        /// `(local binding, name in the loaded module)`.
        names: &'a [(&'a Ident<'a>, &'a str)],
    },
}

/// The operator of an assignment statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// Plain `=`.
    Eq,
    /// Augmented `op=`: one of `+ - * / // % & | ^ << >>`.
    Aug(BinOp),
}

/// An expression node.
#[derive(Debug)]
pub struct Expr<'a> {
    pub kind: ExprKind<'a>,
    /// The full extent of the expression.
    pub span: Span,
}

#[derive(Debug)]
pub enum ExprKind<'a> {
    Ident(Ident<'a>),
    Literal(Literal<'a>),
    /// `(x)`: kept so that positions and assignability follow starlark-go.
    Paren(&'a Expr<'a>),
    /// `[a, b]`.
    List(&'a [&'a Expr<'a>]),
    /// `a, b` or `(a, b)` or `()`.
    Tuple(&'a [&'a Expr<'a>]),
    /// `{k: v, ...}`.
    Dict(&'a [DictEntry<'a>]),
    /// `[body for ... if ...]`.
    ListComp {
        body: &'a Expr<'a>,
        clauses: &'a [Clause<'a>],
    },
    /// `{key: value for ... if ...}`. `colon` is where inserting an entry
    /// is reported (an unhashable key, for example).
    DictComp {
        key: &'a Expr<'a>,
        value: &'a Expr<'a>,
        clauses: &'a [Clause<'a>],
        colon: Pos,
    },
    /// `then if cond else els`. `if_pos` is the `if` keyword.
    Cond {
        then: &'a Expr<'a>,
        cond: &'a Expr<'a>,
        els: &'a Expr<'a>,
        if_pos: Pos,
    },
    /// `lambda params: body`; the body is a single `return` statement.
    Lambda(&'a Function<'a>),
    /// `func(args)`. `lparen` is the `(`, where call errors are reported.
    Call {
        func: &'a Expr<'a>,
        args: &'a [Arg<'a>],
        lparen: Pos,
    },
    /// `x[index]`. `lbrack` is the `[`.
    Index {
        x: &'a Expr<'a>,
        index: &'a Expr<'a>,
        lbrack: Pos,
    },
    /// `x[lo:hi:step]`, each part optional.
    Slice {
        x: &'a Expr<'a>,
        lo: Option<&'a Expr<'a>>,
        hi: Option<&'a Expr<'a>>,
        step: Option<&'a Expr<'a>>,
        lbrack: Pos,
    },
    /// `x.name`. `name.span` locates the attribute name.
    Dot {
        x: &'a Expr<'a>,
        name: &'a Ident<'a>,
        dot: Pos,
    },
    /// `l op r`, including `and`, `or`, `in` and `not in`.
    Binary {
        op: BinOp,
        l: &'a Expr<'a>,
        r: &'a Expr<'a>,
        op_pos: Pos,
    },
    /// `op x`: `-`, `+`, `~`, `not`.
    Unary {
        op: UnaryOp,
        x: &'a Expr<'a>,
        op_pos: Pos,
    },
}

/// A literal value, decoded by the lexer.
#[derive(Debug, Clone, Copy)]
pub enum Literal<'a> {
    /// An int literal that fits in `i64`.
    Int(i64),
    /// An int literal too large for `i64`: its digits (no prefix, no sign)
    /// and their radix (2, 8, 10 or 16).
    BigInt {
        digits: &'a str,
        radix: u32,
    },
    Float(f64),
    /// A string literal, escapes decoded. Always valid UTF-8.
    String(&'a str),
    /// A bytes literal (`b"..."`), escapes decoded.
    Bytes(&'a [u8]),
}

/// One `key: value` of a dict display.
#[derive(Debug)]
pub struct DictEntry<'a> {
    pub key: &'a Expr<'a>,
    pub value: &'a Expr<'a>,
    pub colon: Pos,
}

/// A `for` or `if` clause of a comprehension.
#[derive(Debug)]
pub enum Clause<'a> {
    For {
        vars: &'a Expr<'a>,
        iter: &'a Expr<'a>,
        for_pos: Pos,
    },
    If {
        cond: &'a Expr<'a>,
        if_pos: Pos,
    },
}

/// One argument of a call.
#[derive(Debug)]
pub enum Arg<'a> {
    Positional(&'a Expr<'a>),
    /// `name=value`.
    Named {
        name: &'a Ident<'a>,
        value: &'a Expr<'a>,
    },
    /// `*value`; `star` is the position of the `*`.
    Star {
        value: &'a Expr<'a>,
        star: Pos,
    },
    /// `**value`; `star` is the position of the `**`.
    StarStar {
        value: &'a Expr<'a>,
        star: Pos,
    },
}

/// A `def` or `lambda`.
#[derive(Debug)]
pub struct Function<'a> {
    /// The function's name; `"lambda"` for lambdas.
    pub name: &'a str,
    /// Position of the `def` or `lambda` keyword.
    pub pos: Pos,
    pub params: &'a [Param<'a>],
    pub body: &'a [&'a Stmt<'a>],
    /// Locals, cells and free variables. Filled by the resolver.
    pub scope: OnceCell<Scope<'a>>,
}

/// One parameter of a `def` or `lambda`.
#[derive(Debug)]
pub struct Param<'a> {
    pub kind: ParamKind<'a>,
    pub span: Span,
}

#[derive(Debug)]
pub enum ParamKind<'a> {
    /// `name`.
    Required(&'a Ident<'a>),
    /// `name=default`.
    Optional(&'a Ident<'a>, &'a Expr<'a>),
    /// A bare `*`, which only marks the following parameters keyword-only.
    Star,
    /// `*name`.
    Args(&'a Ident<'a>),
    /// `**name`.
    Kwargs(&'a Ident<'a>),
}

/// An identifier occurrence (a use or a binding). The resolver records
/// what it refers to in `binding`.
#[derive(Debug)]
pub struct Ident<'a> {
    pub name: &'a str,
    pub span: Span,
    pub binding: Cell<Binding>,
}

impl<'a> Ident<'a> {
    pub fn new(name: &'a str, span: Span) -> Ident<'a> {
        Ident {
            name,
            span,
            binding: Cell::new(Binding::Unresolved),
        }
    }
}

/// What an identifier refers to, as decided by the resolver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// Not yet resolved (or not a variable, like an attribute name or a
    /// keyword argument's name).
    Unresolved,
    /// Slot `i` of the enclosing function's locals, not captured.
    Local(u32),
    /// Slot `i` of the enclosing function's locals, captured by an inner
    /// function: the slot holds a cell.
    Cell(u32),
    /// Free variable `i` of the enclosing function (a cell from an outer
    /// function, see [`Scope::freevars`]).
    Free(u32),
    /// Global `i` of the module ([`Module::globals`]).
    Global(u32),
    /// Predeclared name `i` (index into the resolver's predeclared list:
    /// capability roots and module-level names the host provides).
    Predeclared(u32),
    /// Universal name `i` (index into the resolver's universal list: the
    /// builtins).
    Universal(u32),
}

/// The variables of a function (or of the module's top level).
#[derive(Debug, Default)]
pub struct Scope<'a> {
    /// Locals in slot order: parameters first, in declaration order, then
    /// every other name bound in the body (including comprehension
    /// variables).
    pub locals: &'a [Local<'a>],
    /// Variables of enclosing functions that this function uses. Each entry
    /// says how the enclosing function reaches the cell when it creates this
    /// function's closure.
    pub freevars: &'a [FreeVar<'a>],
}

/// A local variable slot.
#[derive(Debug, Clone, Copy)]
pub struct Local<'a> {
    pub name: &'a str,
    /// Where the variable is first bound.
    pub pos: Pos,
    /// Whether an inner function captures it (its slot holds a cell).
    pub is_cell: bool,
}

/// A free variable of a function.
#[derive(Debug, Clone, Copy)]
pub struct FreeVar<'a> {
    pub name: &'a str,
    pub pos: Pos,
    /// The variable in the *enclosing* function: always `Binding::Cell(i)`
    /// or `Binding::Free(i)`.
    pub outer: Binding,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    BitOr,
    BitXor,
    BitAnd,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
}

impl BinOp {
    /// The operator as written in source (`"not in"` for `NotIn`).
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::NotIn => "not in",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::BitAnd => "&",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
        }
    }
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Plus,
    Invert,
    Not,
}

impl UnaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Plus => "+",
            UnaryOp::Invert => "~",
            UnaryOp::Not => "not",
        }
    }
}
