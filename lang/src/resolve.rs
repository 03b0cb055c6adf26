//! The resolver: binds every identifier of a parsed module and enforces the
//! static rules of starlark-go's default file options.
//!
//! It follows starlark-go's `resolve` package in behaviour, because error
//! texts, error order and variable classification must match the reference:
//! a first pass walks the tree, records binding uses (assignment targets,
//! parameters, `for` and comprehension variables, `def` names) in a tree of
//! blocks (file, function, comprehension) and collects every other use in
//! its function; leaving a function resolves its own locals; at the end of
//! the module the remaining uses are looked up lexically, innermost function
//! first, which turns captured locals into cells and threads free variables
//! through every intervening function. Globals may be referenced before
//! their definition, so "undefined" is only decided at the end — which is
//! also why starlark-go reports those errors after every structural one, and
//! so do we. Only the first error is reported, as the reference does.
//!
//! Deviations, on purpose: `break`/`continue` in a function nested in a
//! loop is an error (the reference's pinned starlark-go forgets to reset
//! its loop count there and then crashes in its compiler); parameter slots
//! follow declaration order, as [`Scope::locals`] documents, where
//! starlark-go moves `*args` and `**kwargs` last (errors still follow
//! starlark-go's order); `set` is rejected by name even if absent from the
//! universe. `load` resolves, as in starlark-go, binding its names as
//! top-level locals; running it is the VM's error ("load not implemented by
//! this application").
//!
//! Walks are recursive, bounded by the parser's [`crate::MAX_NESTING`],
//! except along left-nested chains (`a + b + c`, `x.f()[0]`, `elif`), which
//! are walked with a heap stack. Names are looked up in one hash table keyed
//! by (block, name), so the pass is linear in the size of the tree.

use crate::ast::{
    Arg, AssignOp, Binding, Clause, Expr, ExprKind, FreeVar, Function, Ident, Local, Module,
    ParamKind, Pos, Scope, Stmt, StmtKind,
};
use crate::diagnostic::{Diagnostic, LineIndex, FILE_NAME};
use crate::hash::{KeyHash, SeededHash};
use crate::hint::Hint;
use crate::prefetch::{prefetch, prefetch_between};
use bumpalo::Bump;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};

/// The names a module may use without defining them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Names<'n> {
    /// Names the host provides to this module (capability roots): a use
    /// becomes `Binding::Predeclared(index)`. They shadow universal names.
    pub predeclared: &'n [&'n str],
    /// The builtins every module sees: a use becomes
    /// `Binding::Universal(index)`.
    pub universal: &'n [&'n str],
}

/// Resolves `module` in place: sets every identifier's [`Binding`], every
/// function's [`Scope`], and the module's scope and globals. Returns the
/// first error in starlark-go's order and wording (the tree is then only
/// partly annotated and must not be compiled).
pub fn resolve<'a>(
    arena: &'a Bump,
    module: &'a Module<'a>,
    names: &Names<'_>,
) -> Result<(), Diagnostic> {
    let mut r = Resolver::new(module.source, names);
    r.stmts(module.stmts);
    r.blocks[FILE as usize].end = r.blocks.len() as BlockId;
    r.resolve_local_uses(FILE);
    r.resolve_non_local_uses(FILE);
    if let Some(err) = r.error {
        return Err(err);
    }
    r.finish(arena, module);
    Ok(())
}

/// The source length from which the resolver prefetches the tree: its
/// tree (about 13 bytes per source byte) then outgrows the L2 cache.
const PREFETCH_FROM: usize = 32 << 10;

/// The message starlark-go gives for the reserved name `set`.
const NO_SETS: &str = "this Starlark dialect does not support sets";

/// The file (module top-level) block is always block 0.
const FILE: BlockId = 0;

type BlockId = u32;
type BindId = u32;
type FuncId = u32;
/// An interned name: every distinct identifier of the module gets one, the
/// first time the walk meets it, so that the tables below are keyed by
/// small integers instead of hashing and comparing text on every lookup.
type Sym = u32;

/// No binding (in the per-name tables).
const NONE: BindId = BindId::MAX;

type Map<'k, V> = HashMap<Name<'k>, V, SeededHash>;

/// A name as a key of [`Map`]: hashed as its text, compared with a few
/// word loads when it is short, as most are (a `str`'s equality is a
/// `memcmp` call, which dominated the comparison).
#[derive(Clone, Copy)]
struct Name<'k>(&'k str);

impl PartialEq for Name<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        let n = a.len();
        if n != b.len() {
            return false;
        }
        let word =
            |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
        match n {
            // `tail_word` reads every byte of up to 8 bytes.
            0..=8 => crate::hash::tail_word(a) == crate::hash::tail_word(b),
            9..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
            _ => a == b,
        }
    }
}

impl Eq for Name<'_> {}

impl Hash for Name<'_> {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.hash(h)
    }
}

/// The key of a name bound (or memoized) in a block: two `u32`s rather
/// than one `u64`, so that an entry of the table, with its binding, takes
/// 12 bytes instead of 16 (the table of a large program outgrows the
/// cache, and every lookup is a miss in it).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    block: BlockId,
    sym: Sym,
}

impl Hash for Key {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64((u64::from(self.block) << 32) | u64::from(self.sym));
    }
}

#[inline]
fn key(block: BlockId, sym: Sym) -> Key {
    Key { block, sym }
}

/// What the resolver knows about one distinct name.
#[derive(Clone, Copy)]
struct SymInfo<'a> {
    name: &'a str,
    /// Its global binding, or [`NONE`].
    global: BindId,
    /// Its memoized predeclared or universal binding, or [`NONE`].
    builtin: BindId,
}

/// The predeclared or universal names, searched by name. A short list is
/// scanned (each name is looked up once per program, then memoized), which
/// costs less than building a table for every program; a long one gets a
/// table on the first lookup, so no lookup costs more than [`NameList::SCAN`]
/// comparisons.
struct NameList<'n> {
    names: &'n [&'n str],
    table: Option<Map<'n, u32>>,
    hash: SeededHash,
}

impl<'n> NameList<'n> {
    /// The longest list that is scanned.
    const SCAN: usize = 64;

    fn new(names: &'n [&'n str], hash: SeededHash) -> Self {
        NameList {
            names,
            table: None,
            hash,
        }
    }

    /// The index of the first occurrence of `name`.
    fn get(&mut self, name: &str) -> Option<u32> {
        if self.names.len() <= Self::SCAN {
            return self.names.iter().position(|&n| n == name).map(|i| i as u32);
        }
        let (names, hash) = (self.names, self.hash);
        let table = self.table.get_or_insert_with(|| {
            let mut map = Map::with_capacity_and_hasher(names.len(), hash);
            for (i, &n) in names.iter().enumerate() {
                // The first occurrence wins, as a scan would.
                map.entry(Name(n)).or_insert(i as u32);
            }
            map
        });
        table.get(&Name(name)).copied()
    }
}

/// What a binding is, as starlark-go classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Undefined,
    Local,
    Cell,
    Free,
    Global,
    Predeclared,
    Universal,
}

impl Kind {
    /// The word starlark-go prints for the scope in "cannot reassign".
    fn word(self) -> &'static str {
        match self {
            Kind::Undefined => "undefined",
            Kind::Local => "local",
            Kind::Cell => "cell",
            Kind::Free => "free",
            Kind::Global => "global",
            Kind::Predeclared => "predeclared",
            Kind::Universal => "universal",
        }
    }
}

/// One variable. Uses refer to it by id, so that turning a local into a
/// cell later changes every use at once.
#[derive(Clone, Copy, Debug)]
struct Bind {
    kind: Kind,
    /// Slot of a local/cell, free-variable index, global slot, or index
    /// into the predeclared/universal list.
    index: u32,
    sym: Sym,
    /// Where it is first bound (unused for predeclared/universal names).
    pos: Pos,
}

impl Bind {
    fn to_binding(self) -> Binding {
        match self.kind {
            Kind::Undefined => Binding::Unresolved,
            Kind::Local => Binding::Local(self.index),
            Kind::Cell => Binding::Cell(self.index),
            Kind::Free => Binding::Free(self.index),
            Kind::Global => Binding::Global(self.index),
            Kind::Predeclared => Binding::Predeclared(self.index),
            Kind::Universal => Binding::Universal(self.index),
        }
    }
}

/// An identifier in a non-binding position, and the block it appears in.
#[derive(Clone, Copy)]
struct Use<'a> {
    id: &'a Ident<'a>,
    env: BlockId,
    sym: Sym,
}

/// A lexical block: the file, a function, or a comprehension. Blocks are
/// numbered in pre-order, so a block's descendants are the ids from its own
/// up to `end`.
struct Block<'a> {
    parent: BlockId,
    /// The innermost enclosing function or file block (itself for those).
    container: BlockId,
    /// Set for function blocks.
    func: Option<FuncId>,
    /// One past the last descendant block.
    end: BlockId,
    /// Uses not yet resolved; only container blocks collect them.
    uses: Vec<Use<'a>>,
}

/// A `def` or `lambda` being resolved.
struct Func<'a> {
    func: &'a Function<'a>,
    locals: Vec<BindId>,
    freevars: Vec<BindId>,
}

struct Resolver<'a, 'n> {
    source: &'a str,
    hash: SeededHash,
    predeclared: NameList<'n>,
    universal: NameList<'n>,
    blocks: Vec<Block<'a>>,
    /// The names bound in each block, plus (in the final pass) memoized
    /// lookups of outer names, as starlark-go memoizes them: the "did you
    /// mean" hint draws on these. One table for all blocks, so that a block
    /// costs no allocation of its own.
    bindings: HashMap<Key, BindId, KeyHash>,
    /// The interned names, by text.
    syms: Map<'a, Sym>,
    /// Each interned name's text, global and builtin binding.
    sym_info: Vec<SymInfo<'a>>,
    env: BlockId,
    binds: Vec<Bind>,
    funcs: Vec<Func<'a>>,
    module_globals: Vec<BindId>,
    module_locals: Vec<BindId>,
    /// Identifiers bound to a local, which may still become a cell: their
    /// binding is rewritten at the end if it did. Every other binding is
    /// final when found and written at once (while the node is in cache).
    maybe_cells: Vec<(&'a Ident<'a>, BindId)>,
    /// Enclosing `for`/`while` loops of the current function (or file).
    loops: u32,
    /// Enclosing `if` statements.
    ifs: u32,
    /// The first error, in starlark-go's reporting order.
    error: Option<Diagnostic>,
    /// Pending nodes of the left spines being walked (see `left_spine`).
    spine: Vec<&'a Expr<'a>>,
    /// Whether the tree is large enough to outgrow the cache, so that the
    /// walk prefetches it (see [`prefetch_between`]).
    prefetch: bool,
}

impl<'a, 'n> Resolver<'a, 'n> {
    fn new(source: &'a str, names: &Names<'n>) -> Self {
        let hash = SeededHash::new(RandomState::new().hash_one(0x5eed_u64));
        // Sizes from the source length (about one identifier per eight
        // bytes in real programs) save reallocating while walking.
        let expected = source.len();
        let mut blocks = Vec::with_capacity(expected / 128 + 1);
        blocks.push(Block {
            parent: FILE,
            container: FILE,
            func: None,
            end: FILE + 1,
            uses: Vec::with_capacity(expected / 16),
        });
        Resolver {
            source,
            hash,
            predeclared: NameList::new(names.predeclared, hash),
            universal: NameList::new(names.universal, hash),
            blocks,
            // Small at first (a small program's names, or a quarter of a
            // large one's): a table sized for the end is sparse while the
            // walk fills it, and a large program's lookups then miss the
            // cache over a wider area.
            bindings: HashMap::with_capacity_and_hasher(
                (expected / 64).max(64),
                KeyHash::new(hash.seed()),
            ),
            syms: Map::with_capacity_and_hasher((expected / 64).max(32), hash),
            sym_info: Vec::with_capacity((expected / 64).max(32)),
            env: FILE,
            binds: Vec::with_capacity(expected / 16),
            funcs: Vec::with_capacity(expected / 256 + 4),
            module_globals: Vec::new(),
            module_locals: Vec::new(),
            maybe_cells: Vec::with_capacity(expected / 16),
            loops: 0,
            ifs: 0,
            error: None,
            spine: Vec::with_capacity(16),
            prefetch: source.len() >= PREFETCH_FROM,
        }
    }

    /// Records an error; only the first one is kept (starlark-go reports
    /// the first of its list).
    fn error(&mut self, pos: Pos, message: impl FnOnce() -> String) {
        self.error_with_hint(pos, None, message);
    }

    /// [`Resolver::error`] for a construct the language lacks.
    fn error_with_hint(&mut self, pos: Pos, hint: Option<Hint>, message: impl FnOnce() -> String) {
        if self.error.is_none() {
            self.error = Some(Diagnostic::new(pos, message()).with_hint(hint));
        }
    }

    fn new_bind(&mut self, kind: Kind, index: u32, sym: Sym, pos: Pos) -> BindId {
        let id = self.binds.len() as BindId;
        self.binds.push(Bind {
            kind,
            index,
            sym,
            pos,
        });
        id
    }

    /// The interned name of `name`.
    fn intern(&mut self, name: &'a str) -> Sym {
        let next = self.sym_info.len() as Sym;
        let sym = *self.syms.entry(Name(name)).or_insert(next);
        if sym == next {
            self.sym_info.push(SymInfo {
                name,
                global: NONE,
                builtin: NONE,
            });
        }
        sym
    }

    /// The text of a binding's name.
    fn name_of(&self, b: BindId) -> &'a str {
        self.sym_info[self.binds[b as usize].sym as usize].name
    }

    fn push_block(&mut self, func: Option<FuncId>) -> BlockId {
        let id = self.blocks.len() as BlockId;
        let parent = self.env;
        let container = if func.is_some() {
            id
        } else {
            self.blocks[parent as usize].container
        };
        self.blocks.push(Block {
            parent,
            container,
            func,
            end: id + 1,
            // Only functions collect uses; most have a few dozen.
            uses: if func.is_some() {
                Vec::with_capacity(32)
            } else {
                Vec::new()
            },
        });
        self.env = id;
        id
    }

    fn pop_block(&mut self) {
        let end = self.blocks.len() as BlockId;
        let block = &mut self.blocks[self.env as usize];
        block.end = end;
        self.env = block.parent;
    }

    /// Whether the current statement is outside every function.
    fn at_top_level(&self) -> bool {
        self.blocks[self.env as usize].container == FILE
    }

    /// `<codemode>:LINE:COL` of `pos`, for messages that cite a second
    /// position.
    fn position(&self, pos: Pos) -> String {
        let (line, col) = LineIndex::new(self.source).line_col(pos);
        format!("{FILE_NAME}:{line}:{col}")
    }

    // ---- binding ----------------------------------------------------------

    /// A binding occurrence of `id` at `pos`: a global at the top level
    /// (reassignment is an error), a local elsewhere. Returns whether the
    /// name was already bound in that block.
    fn bind(&mut self, id: &'a Ident<'a>, pos: Pos) -> bool {
        if self.env != FILE {
            return self.bind_local(id, pos);
        }
        let sym = self.intern(id.name);
        let existing = match self.bindings.get(&key(FILE, sym)) {
            Some(&b) => Some(b),
            None => Some(self.sym_info[sym as usize].global).filter(|&b| b != NONE),
        };
        let b = match existing {
            Some(b) => {
                let prev = self.binds[b as usize];
                if self.error.is_none() {
                    let at = self.position(prev.pos);
                    self.error(pos, || {
                        format!(
                            "cannot reassign {} {} declared at {at}",
                            prev.kind.word(),
                            id.name
                        )
                    });
                }
                b
            }
            None => {
                let index = self.module_globals.len() as u32;
                let b = self.new_bind(Kind::Global, index, sym, pos);
                self.sym_info[sym as usize].global = b;
                self.module_globals.push(b);
                b
            }
        };
        self.set_binding(id, b);
        existing.is_some()
    }

    /// Binds `id` as a local of the current block, in a new slot of the
    /// enclosing function (or of the top level). Returns whether the block
    /// already bound the name.
    fn bind_local(&mut self, id: &'a Ident<'a>, pos: Pos) -> bool {
        let env = self.env;
        let sym = self.intern(id.name);
        let existed = self.bindings.contains_key(&key(env, sym));
        if !existed {
            let container = self.blocks[env as usize].container;
            let locals = match self.blocks[container as usize].func {
                Some(f) => &self.funcs[f as usize].locals,
                None => &self.module_locals,
            };
            let index = locals.len() as u32;
            let b = self.new_bind(Kind::Local, index, sym, pos);
            match self.blocks[container as usize].func {
                Some(f) => self.funcs[f as usize].locals.push(b),
                None => self.module_locals.push(b),
            }
            self.bindings.insert(key(env, sym), b);
        }
        self.use_sym(id, sym);
        existed
    }

    /// Records that `id` refers to binding `b`.
    fn set_binding(&mut self, id: &'a Ident<'a>, b: BindId) {
        let bind = self.binds[b as usize];
        id.binding.set(bind.to_binding());
        if bind.kind == Kind::Local {
            self.maybe_cells.push((id, b));
        }
    }

    /// A use of `id` in the current block, resolved when its function ends
    /// (locals) or at the end of the module (everything else).
    fn use_ident(&mut self, id: &'a Ident<'a>) {
        let sym = self.intern(id.name);
        self.use_sym(id, sym);
    }

    /// [`Resolver::use_ident`] of an identifier already interned.
    fn use_sym(&mut self, id: &'a Ident<'a>, sym: Sym) {
        let env = self.env;
        let container = self.blocks[env as usize].container;
        self.blocks[container as usize]
            .uses
            .push(Use { id, env, sym });
    }

    // ---- statements -------------------------------------------------------

    fn stmts(&mut self, stmts: &'a [&'a Stmt<'a>]) {
        for (i, stmt) in stmts.iter().enumerate() {
            // The walk of a large program waits on memory more than it
            // computes: the next statement's nodes are requested while this
            // one is resolved. (A small program's tree stays in the cache.)
            if self.prefetch {
                if let Some(&next) = stmts.get(i + 1) {
                    prefetch_between(next, *stmt);
                }
            }
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt<'a>) {
        let pos = stmt.span.start;
        match &stmt.kind {
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Assign { lhs, op, rhs, .. } => {
                self.expr(rhs);
                self.assign(lhs, *op != AssignOp::Eq);
            }
            StmtKind::If { .. } => self.if_chain(stmt),
            StmtKind::Def { name, func } => {
                self.bind(name, name.span.start);
                self.function(func);
            }
            StmtKind::For { vars, iter, body } => {
                if self.at_top_level() {
                    self.error(pos, || "for loop not within a function".into());
                }
                self.expr(iter);
                self.assign(vars, false);
                self.loops += 1;
                self.stmts(body);
                self.loops -= 1;
            }
            StmtKind::While { cond, body } => {
                self.error_with_hint(pos, Some(Hint::While), || {
                    "this Starlark dialect does not support while loops".into()
                });
                if self.at_top_level() {
                    self.error(pos, || "while loop not within a function".into());
                }
                self.expr(cond);
                self.loops += 1;
                self.stmts(body);
                self.loops -= 1;
            }
            StmtKind::Return(value) => {
                if self.at_top_level() {
                    self.error(pos, || "return statement not within a function".into());
                }
                if let Some(value) = value {
                    self.expr(value);
                }
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loops == 0 {
                    let word = if matches!(stmt.kind, StmtKind::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.error(pos, || format!("{word} not in a loop"));
                }
            }
            StmtKind::Pass => {}
            StmtKind::Load { names, .. } => self.load(pos, names),
        }
    }

    /// An `if` and its `elif` chain (each `elif` is an `If` alone in the
    /// previous `els`), walked as a loop so a long chain costs no stack.
    fn if_chain(&mut self, stmt: &'a Stmt<'a>) {
        let mut current = stmt;
        let mut opened = 0;
        while let StmtKind::If { cond, then, els } = &current.kind {
            if self.at_top_level() {
                let pos = current.span.start;
                self.error(pos, || "if statement not within a function".into());
            }
            self.expr(cond);
            self.ifs += 1;
            opened += 1;
            self.stmts(then);
            match els {
                [elif @ Stmt {
                    kind: StmtKind::If { .. },
                    ..
                }] => current = elif,
                _ => {
                    self.stmts(els);
                    break;
                }
            }
        }
        self.ifs -= opened;
    }

    /// `load(...)`: starlark-go resolves it (the names become locals of the
    /// top level) and only fails when it runs, since no loader exists.
    fn load(&mut self, pos: Pos, names: &'a [(&'a Ident<'a>, &'a str)]) {
        if !self.at_top_level() {
            self.error(pos, || "load statement within a function".into());
        } else if self.loops > 0 {
            self.error(pos, || "load statement within a loop".into());
        } else if self.ifs > 0 {
            self.error(pos, || "load statement within a conditional".into());
        }
        for &(to, from) in names {
            let (to_pos, from_pos) = self.load_positions(to);
            if from.is_empty() {
                self.error(from_pos, || "load: empty identifier".into());
                continue;
            }
            if from.starts_with('_') {
                self.error(from_pos, || {
                    format!("load: names with leading underscores are not exported: {from}")
                });
            }
            if self.bind_local(to, to_pos) {
                self.error(to_pos, || format!("cannot reassign top-level {}", to.name));
            }
        }
    }

    /// starlark-go places a loaded name one column into its string literal
    /// (`"name"` or `alias="name"`). The tree keeps only the local name's
    /// identifier, so the literal is found in the source.
    fn load_positions(&self, to: &Ident<'a>) -> (Pos, Pos) {
        let bytes = self.source.as_bytes();
        let start = to.span.start;
        let is_quote = |i: usize| matches!(bytes.get(i), Some(b'"' | b'\''));
        if start > 0 && is_quote(start as usize - 1) {
            // `"name"`, the identifier already one column in.
            (start, start)
        } else if is_quote(start as usize) {
            // `"name"`, the identifier spanning the whole literal.
            (start + 1, start + 1)
        } else {
            // `alias = "name"`: skip to the literal after the `=`.
            let mut i = skip_blank(bytes, to.span.end as usize);
            if bytes.get(i) == Some(&b'=') {
                i = skip_blank(bytes, i + 1);
                (start, i as Pos + 1)
            } else {
                (start, start)
            }
        }
    }

    /// The position of the `=` of an optional parameter, where starlark-go
    /// reports its errors; the tree keeps only the name and the default.
    fn eq_pos(&self, name: &Ident<'a>, default: &Expr<'a>) -> Pos {
        let bytes = self.source.as_bytes();
        let i = skip_blank(bytes, name.span.end as usize);
        if bytes.get(i) == Some(&b'=') && (i as Pos) < default.span.start {
            i as Pos
        } else {
            name.span.end
        }
    }

    /// The target of an assignment, `for` loop or comprehension clause.
    fn assign(&mut self, lhs: &'a Expr<'a>, augmented: bool) {
        match &lhs.kind {
            ExprKind::Ident(id) => {
                self.bind(id, id.span.start);
            }
            ExprKind::Index { x, index, .. } => {
                self.expr(x);
                self.expr(index);
            }
            ExprKind::Dot { x, .. } => self.expr(x),
            ExprKind::Tuple(elems) | ExprKind::List(elems) => {
                if augmented {
                    let what = if matches!(lhs.kind, ExprKind::Tuple(_)) {
                        "tuple"
                    } else {
                        "list"
                    };
                    self.error(lhs.span.start, || {
                        format!("can't use {what} expression in augmented assignment")
                    });
                }
                for elem in elems.iter() {
                    self.assign(elem, augmented);
                }
            }
            ExprKind::Paren(x) => self.assign(x, augmented),
            other => {
                // starlark-go names the offending node by its Go type.
                let what = match other {
                    ExprKind::Literal(_) => "literal",
                    ExprKind::Dict(_) => "dictexpr",
                    ExprKind::ListComp { .. } | ExprKind::DictComp { .. } => "comprehension",
                    ExprKind::Cond { .. } => "condexpr",
                    ExprKind::Lambda(_) => "lambdaexpr",
                    ExprKind::Call { .. } => "callexpr",
                    ExprKind::Slice { .. } => "sliceexpr",
                    ExprKind::Binary { .. } => "binaryexpr",
                    ExprKind::Unary { .. } => "unaryexpr",
                    _ => "expr",
                };
                self.error(lhs.span.start, || format!("can't assign to {what}"));
            }
        }
    }

    // ---- expressions ------------------------------------------------------

    fn expr(&mut self, e: &'a Expr<'a>) {
        match &e.kind {
            ExprKind::Ident(id) => self.use_ident(id),
            ExprKind::Literal(_) => {}
            ExprKind::Paren(x) => self.expr(x),
            ExprKind::List(xs) | ExprKind::Tuple(xs) => {
                for x in xs.iter() {
                    self.expr(x);
                }
            }
            ExprKind::Dict(entries) => {
                for entry in entries.iter() {
                    self.expr(entry.key);
                    self.expr(entry.value);
                }
            }
            ExprKind::ListComp { body, clauses } => {
                self.comprehension(clauses, body, None);
            }
            ExprKind::DictComp {
                key,
                value,
                clauses,
                ..
            } => self.comprehension(clauses, key, Some(value)),
            ExprKind::Cond {
                then, cond, els, ..
            } => {
                self.expr(cond);
                self.expr(then);
                self.expr(els);
            }
            ExprKind::Lambda(func) => self.function(func),
            ExprKind::Unary { x, .. } => self.expr(x),
            ExprKind::Binary { .. }
            | ExprKind::Call { .. }
            | ExprKind::Index { .. }
            | ExprKind::Slice { .. }
            | ExprKind::Dot { .. } => self.left_spine(e),
        }
    }

    /// Binary operators and postfix forms (`a + b + c`, `x.f(1)[2]`) nest to
    /// the left without any bracket, so a long chain is a deep tree even in
    /// shallow source: walk its left spine with a heap stack instead of
    /// recursion, visiting operands in source order.
    fn left_spine(&mut self, e: &'a Expr<'a>) {
        let base = self.spine.len();
        let mut leftmost = e;
        loop {
            let next = match &leftmost.kind {
                ExprKind::Binary { l, .. } => l,
                ExprKind::Call { func: x, .. }
                | ExprKind::Index { x, .. }
                | ExprKind::Slice { x, .. }
                | ExprKind::Dot { x, .. } => x,
                _ => break,
            };
            self.spine.push(leftmost);
            leftmost = next;
        }
        self.expr(leftmost);
        while self.spine.len() > base {
            let Some(node) = self.spine.pop() else { break };
            match &node.kind {
                ExprKind::Binary { r, .. } => self.expr(r),
                ExprKind::Call { args, .. } => self.call(node, args),
                ExprKind::Index { index, .. } => self.expr(index),
                ExprKind::Slice { lo, hi, step, .. } => {
                    for part in [lo, hi, step].into_iter().flatten() {
                        self.expr(part);
                    }
                }
                // The attribute name is not a variable.
                _ => {}
            }
        }
    }

    /// A comprehension opens its own block; its first iterable is resolved
    /// outside it (`[x for x in x]`). Its variables still take slots of the
    /// enclosing function.
    fn comprehension(
        &mut self,
        clauses: &'a [Clause<'a>],
        body: &'a Expr<'a>,
        value: Option<&'a Expr<'a>>,
    ) {
        let rest = match clauses.first() {
            Some(Clause::For { vars, iter, .. }) => {
                self.expr(iter);
                self.push_block(None);
                self.assign(vars, false);
                &clauses[1..]
            }
            // The grammar always starts with `for`; stay total anyway.
            _ => {
                self.push_block(None);
                clauses
            }
        };
        for clause in rest {
            match clause {
                Clause::If { cond, .. } => self.expr(cond),
                Clause::For { vars, iter, .. } => {
                    self.assign(vars, false);
                    self.expr(iter);
                }
            }
        }
        self.expr(body);
        if let Some(value) = value {
            self.expr(value);
        }
        self.pop_block();
    }

    /// The arguments of a call (its callee is resolved): argument-order
    /// rules as starlark-go checks them.
    fn call(&mut self, call: &'a Expr<'a>, args: &'a [Arg<'a>]) {
        let mut seen_varargs = false;
        let mut seen_kwargs = false;
        let mut named = NameSet::new(self.hash);
        let (mut positional, mut keywords) = (0usize, 0usize);
        for arg in args {
            match arg {
                Arg::StarStar { value, star } => {
                    if seen_kwargs {
                        self.error(*star, || "multiple **kwargs not allowed".into());
                    }
                    seen_kwargs = true;
                    self.expr(value);
                }
                Arg::Star { value, star } => {
                    if seen_kwargs {
                        self.error(*star, || "*args may not follow **kwargs".into());
                    } else if seen_varargs {
                        self.error(*star, || "multiple *args not allowed".into());
                    }
                    seen_varargs = true;
                    self.expr(value);
                }
                Arg::Named { name, value } => {
                    keywords += 1;
                    let pos = name.span.start;
                    if seen_kwargs {
                        self.error(pos, || "keyword argument may not follow **kwargs".into());
                    } else if seen_varargs {
                        self.error(pos, || "keyword argument may not follow *args".into());
                    }
                    if !named.insert(name.name) {
                        self.error(pos, || {
                            format!("keyword argument {} is repeated", go_quote(name.name))
                        });
                    }
                    self.expr(value);
                }
                Arg::Positional(value) => {
                    positional += 1;
                    let pos = value.span.start;
                    if seen_varargs {
                        self.error(pos, || "positional argument may not follow *args".into());
                    } else if seen_kwargs {
                        self.error(pos, || "positional argument may not follow **kwargs".into());
                    } else if !named.is_empty() {
                        self.error(pos, || "positional argument may not follow named".into());
                    }
                    self.expr(value);
                }
            }
        }
        // The bytecode encodes argument counts in a byte.
        if positional >= 256 {
            self.error(call.span.start, || {
                format!("{positional} positional arguments in call, limit is 255")
            });
        }
        if keywords >= 256 {
            self.error(call.span.start, || {
                format!("{keywords} keyword arguments in call, limit is 255")
            });
        }
    }

    /// A `def` or `lambda`: defaults are resolved outside, then the
    /// parameters and body in a new function block.
    fn function(&mut self, func: &'a Function<'a>) {
        for param in func.params {
            if let ParamKind::Optional(_, default) = &param.kind {
                self.expr(default);
            }
        }
        let f = self.funcs.len() as FuncId;
        self.funcs.push(Func {
            func,
            locals: Vec::with_capacity(8),
            freevars: Vec::new(),
        });
        let block = self.push_block(Some(f));
        // A `break` in a nested function does not see the outer loop.
        let outer_loops = std::mem::replace(&mut self.loops, 0);

        self.check_params(func);
        // Slots follow declaration order (the tree's contract), so bind
        // after the checks, which follow starlark-go's order.
        for param in func.params {
            match &param.kind {
                ParamKind::Required(id)
                | ParamKind::Optional(id, _)
                | ParamKind::Args(id)
                | ParamKind::Kwargs(id) => {
                    self.bind_local(id, id.span.start);
                }
                ParamKind::Star => {}
            }
        }

        self.stmts(func.body);
        self.resolve_local_uses(block);
        self.pop_block();
        self.loops = outer_loops;
    }

    /// Parameter-order and duplicate checks, in starlark-go's order: the
    /// plain parameters left to right, then `*args`, then `**kwargs`.
    fn check_params(&mut self, func: &'a Function<'a>) {
        if self.error.is_some() {
            return;
        }
        let mut seen = NameSet::new(self.hash);
        let mut seen_optional = false;
        // The `*` or `*args` parameter, and the `**kwargs` name.
        let mut star: Option<(Pos, Option<&'a Ident<'a>>)> = None;
        let mut star_star: Option<&'a Ident<'a>> = None;
        let mut kwonly = 0usize;
        for param in func.params {
            match &param.kind {
                ParamKind::Required(id) => {
                    let pos = id.span.start;
                    if let Some(kw) = star_star {
                        self.error(pos, || {
                            format!("required parameter may not follow **{}", kw.name)
                        });
                    } else if star.is_some() {
                        kwonly += 1;
                    } else if seen_optional {
                        self.error(pos, || "required parameter may not follow optional".into());
                    }
                    self.duplicate_param(&mut seen, id, pos);
                }
                ParamKind::Optional(id, default) => {
                    let pos = self.eq_pos(id, default);
                    if let Some(kw) = star_star {
                        self.error(pos, || {
                            format!("optional parameter may not follow **{}", kw.name)
                        });
                    } else if star.is_some() {
                        kwonly += 1;
                    }
                    self.duplicate_param(&mut seen, id, pos);
                    seen_optional = true;
                }
                ParamKind::Star | ParamKind::Args(_) => {
                    let pos = param.span.start;
                    if let Some(kw) = star_star {
                        self.error(pos, || format!("* parameter may not follow **{}", kw.name));
                    } else if star.is_some() {
                        self.error(pos, || "multiple * parameters not allowed".into());
                    } else {
                        let name = match &param.kind {
                            ParamKind::Args(id) => Some(*id),
                            _ => None,
                        };
                        star = Some((pos, name));
                    }
                }
                ParamKind::Kwargs(id) => {
                    if star_star.is_some() {
                        self.error(param.span.start, || {
                            "multiple ** parameters not allowed".into()
                        });
                    }
                    star_star = Some(id);
                }
            }
        }
        match star {
            Some((_, Some(args))) => self.duplicate_param(&mut seen, args, args.span.start),
            Some((pos, None)) if kwonly == 0 => {
                self.error(pos, || {
                    "bare * must be followed by keyword-only parameters".into()
                });
            }
            _ => {}
        }
        if let Some(kwargs) = star_star {
            self.duplicate_param(&mut seen, kwargs, kwargs.span.start);
        }
    }

    /// Records parameter `id` in `seen`, reporting a repeat at `pos`.
    fn duplicate_param(&mut self, seen: &mut NameSet<'a>, id: &Ident<'a>, pos: Pos) {
        if !seen.insert(id.name) {
            self.error(pos, || format!("duplicate parameter: {}", id.name));
        }
    }

    // ---- lookup -----------------------------------------------------------

    /// On leaving a container block: resolves the uses of its own locals
    /// and keeps the rest for the end of the module.
    fn resolve_local_uses(&mut self, container: BlockId) {
        let mut uses = std::mem::take(&mut self.blocks[container as usize].uses);
        uses.retain(|u| match self.lookup_local(u) {
            Some(b) if matches!(self.binds[b as usize].kind, Kind::Local | Kind::Cell) => {
                self.set_binding(u.id, b);
                false
            }
            _ => true,
        });
        self.blocks[container as usize].uses = uses;
    }

    /// Looks `u` up in the blocks of its own function (or top level).
    fn lookup_local(&self, u: &Use<'a>) -> Option<BindId> {
        let mut env = u.env;
        loop {
            if let Some(&b) = self.bindings.get(&key(env, u.sym)) {
                return Some(b);
            }
            let block = &self.blocks[env as usize];
            if block.func.is_some() || env == FILE {
                return None;
            }
            env = block.parent;
        }
    }

    /// At the end of the module: resolves what is left, innermost blocks
    /// first, so that free variables are threaded outward.
    fn resolve_non_local_uses(&mut self, block: BlockId) {
        let end = self.blocks[block as usize].end;
        let mut child = block + 1;
        while child < end {
            self.resolve_non_local_uses(child);
            child = self.blocks[child as usize].end;
        }
        let uses = std::mem::take(&mut self.blocks[block as usize].uses);
        for (i, u) in uses.iter().enumerate() {
            // The binding is written into the use's node, which the walk
            // of a large program left long ago: ask for it a few uses ahead.
            if self.prefetch {
                if let Some(ahead) = uses.get(i + 8) {
                    prefetch(ahead.id);
                }
            }
            let b = self.lookup_lexical(u, u.env);
            self.set_binding(u.id, b);
        }
    }

    /// Looks `u` up from block `env` outward. Crossing into an enclosing
    /// function's variable makes it a cell there and a free variable of
    /// every function in between; results are memoized per block.
    fn lookup_lexical(&mut self, u: &Use<'a>, env: BlockId) -> BindId {
        if env == FILE {
            return self.lookup_top_level(u);
        }
        if let Some(&b) = self.bindings.get(&key(env, u.sym)) {
            return b;
        }
        let parent = self.blocks[env as usize].parent;
        let mut b = self.lookup_lexical(u, parent);
        if let Some(f) = self.blocks[env as usize].func {
            let outer = self.binds[b as usize];
            if matches!(outer.kind, Kind::Local | Kind::Cell | Kind::Free) {
                if outer.kind == Kind::Local {
                    self.binds[b as usize].kind = Kind::Cell;
                }
                let freevars = &mut self.funcs[f as usize].freevars;
                let index = freevars.len() as u32;
                freevars.push(b);
                b = self.new_bind(Kind::Free, index, outer.sym, outer.pos);
            }
        }
        self.bindings.insert(key(env, u.sym), b);
        b
    }

    /// A name not bound in any enclosing function: a top-level local (from
    /// `load` or a top-level comprehension), a global, predeclared,
    /// universal, or undefined.
    fn lookup_top_level(&mut self, u: &Use<'a>) -> BindId {
        if let Some(&b) = self.bindings.get(&key(FILE, u.sym)) {
            return b;
        }
        let info = self.sym_info[u.sym as usize];
        if info.global != NONE {
            return info.global;
        }
        if info.builtin != NONE {
            return info.builtin;
        }
        // (Only now the use's node: it is long out of the cache.)
        let name = info.name;
        let pos = u.id.span.start;
        let (kind, index) = if let Some(i) = self.predeclared.get(name) {
            (Kind::Predeclared, i)
        } else if name == "set" {
            // Reserved: never available, whatever the universe says.
            self.error_with_hint(pos, Some(Hint::Set), || NO_SETS.into());
            (Kind::Undefined, 0)
        } else if let Some(i) = self.universal.get(name) {
            (Kind::Universal, i)
        } else {
            if self.error.is_none() {
                let hint = match self.spellcheck(u) {
                    Some(near) => format!(" (did you mean {near}?)"),
                    None => String::new(),
                };
                let constant = matches!(name, "true" | "false" | "null" | "none");
                let python = constant.then_some(Hint::Constants);
                self.error_with_hint(pos, python, || format!("undefined: {name}{hint}"));
            }
            // Not memoized here, as in starlark-go (the function
            // block memoizes it).
            return self.new_bind(Kind::Undefined, 0, u.sym, pos);
        };
        let b = self.new_bind(kind, index, u.sym, pos);
        self.sym_info[u.sym as usize].builtin = b;
        b
    }

    /// The "did you mean" candidate for an undefined name: the nearest of
    /// the names bound (or memoized) in the use's blocks and the globals.
    fn spellcheck(&self, u: &Use<'a>) -> Option<&'a str> {
        let mut chain = vec![u.env];
        let mut env = u.env;
        while env != FILE {
            env = self.blocks[env as usize].parent;
            chain.push(env);
        }
        // An error path: a scan of every binding is affordable here.
        let mut names: Vec<&'a str> = self
            .bindings
            .keys()
            .filter(|k| chain.contains(&k.block))
            .map(|k| self.sym_info[k.sym as usize].name)
            .collect();
        names.extend(self.module_globals.iter().map(|&b| self.name_of(b)));
        names.sort_unstable();
        nearest(u.id.name, &names)
    }

    // ---- output -----------------------------------------------------------

    /// Writes bindings and scopes into the tree.
    fn finish(self, arena: &'a Bump, module: &'a Module<'a>) {
        let binds = &self.binds;
        for &(id, b) in &self.maybe_cells {
            let bind = binds[b as usize];
            if bind.kind == Kind::Cell {
                id.binding.set(bind.to_binding());
            }
        }
        let locals = |slots: &[BindId]| {
            arena.alloc_slice_fill_iter(slots.iter().map(|&b| {
                let bind = binds[b as usize];
                Local {
                    name: self.name_of(b),
                    pos: bind.pos,
                    is_cell: bind.kind == Kind::Cell,
                }
            })) as &'a [Local<'a>]
        };
        for f in &self.funcs {
            let freevars = arena.alloc_slice_fill_iter(f.freevars.iter().map(|&b| {
                let bind = binds[b as usize];
                FreeVar {
                    name: self.name_of(b),
                    pos: bind.pos,
                    outer: bind.to_binding(),
                }
            }));
            // Already set only if this tree was resolved before, with the
            // same result.
            let _ = f.func.scope.set(Scope {
                locals: locals(&f.locals),
                freevars,
            });
        }
        let _ = module.scope.set(Scope {
            locals: locals(&self.module_locals),
            freevars: &[],
        });
        let globals =
            arena.alloc_slice_fill_iter(self.module_globals.iter().map(|&b| self.name_of(b)));
        let _ = module.globals.set(globals);
    }
}

/// A set of names that stays a vector while small (most calls and
/// parameter lists), so the common case does not hash.
struct NameSet<'a> {
    small: Vec<&'a str>,
    large: Option<HashSet<&'a str, SeededHash>>,
    hash: SeededHash,
}

impl<'a> NameSet<'a> {
    const SMALL: usize = 16;

    fn new(hash: SeededHash) -> Self {
        NameSet {
            small: Vec::new(),
            large: None,
            hash,
        }
    }

    fn is_empty(&self) -> bool {
        self.small.is_empty()
    }

    /// Adds `name`; false if it was already present.
    fn insert(&mut self, name: &'a str) -> bool {
        if let Some(large) = &mut self.large {
            return large.insert(name);
        }
        if self.small.contains(&name) {
            return false;
        }
        self.small.push(name);
        if self.small.len() > Self::SMALL {
            let mut large = HashSet::with_capacity_and_hasher(self.small.len() * 2, self.hash);
            large.extend(self.small.iter().copied());
            self.large = Some(large);
        }
        true
    }
}

/// Skips spaces, tabs, newlines, line continuations and comments.
fn skip_blank(bytes: &[u8], mut i: usize) -> usize {
    while let Some(&c) = bytes.get(i) {
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\\' => i += 1,
            b'#' => {
                while bytes.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
            }
            _ => break,
        }
    }
    i
}

/// Go's `%q` of an identifier: identifiers need no escapes.
fn go_quote(name: &str) -> String {
    format!("\"{name}\"")
}

/// The candidate nearest to `x` by edit distance, ignoring case and
/// underscores, if it is within half of `x`'s length; the first of equals
/// in `candidates`' (sorted) order wins. This is starlark-go's hint rule.
pub fn nearest<'c>(x: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let fold = |s: &str| -> Vec<u8> {
        s.chars()
            .filter(|&c| c != '_')
            .flat_map(char::to_lowercase)
            .collect::<String>()
            .into_bytes()
    };
    let x = fold(x);
    let mut best = None;
    let mut best_distance = x.len().div_ceil(2);
    for &candidate in candidates {
        let d = edit_distance(&x, &fold(candidate));
        if d < best_distance {
            best_distance = d;
            best = Some(candidate);
        }
    }
    best
}

/// Levenshtein distance between two byte strings, one row of memory.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_of_a_name_takes_part_in_its_hash() {
        // Whole words and every length of tail (overlapping loads).
        let hash = |s: &str| SeededHash::new(0x1234_5678).hash_one(s);
        for n in 1..=24 {
            let base: String = (0..n as u8).map(|i| char::from(b'a' + i)).collect();
            assert_eq!(hash(&base), hash(&base.clone()));
            for i in 0..n {
                let mut other = base.clone().into_bytes();
                other[i] ^= 0x20;
                let other = String::from_utf8(other).unwrap_or_default();
                assert_ne!(hash(&base), hash(&other), "length {n}, byte {i}");
            }
        }
    }

    #[test]
    fn names_are_equal_exactly_when_their_texts_are() {
        // Every length up to past the word-compare cases, each byte
        // changed in turn, and a shorter or longer text with the same start.
        for n in 0..=40usize {
            let base: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert!(Name(&base) == Name(&base.clone()), "length {n}");
            for i in 0..n {
                let mut other = base.clone().into_bytes();
                other[i] ^= 0x20;
                let other = String::from_utf8(other).unwrap_or_default();
                assert!(Name(&base) != Name(&other), "length {n}, byte {i}");
            }
            assert!(Name(&base) != Name(&base[..n.saturating_sub(1)]) || n == 0);
            assert!(Name(&base) != Name(&format!("{base}a")));
        }
        // Non-ASCII text compares by its bytes.
        assert!(Name("résumé") == Name("résumé"));
        assert!(Name("résumé") != Name("resume"));
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance(b"kitten", b"sitting"), 3);
        assert_eq!(edit_distance(b"", b"abc"), 3);
        assert_eq!(edit_distance(b"abc", b"abc"), 0);
        assert_eq!(edit_distance(b"ab", b"ba"), 2);
    }

    #[test]
    fn nearest_follows_the_half_length_rule() {
        assert_eq!(nearest("fooo", &["foo", "main"]), Some("foo"));
        assert_eq!(nearest("yx", &["yy"]), None);
        assert_eq!(nearest("myvar", &["my_var"]), Some("my_var"));
        assert_eq!(nearest("foo", &["Foo"]), Some("Foo"));
        assert_eq!(nearest("_", &["a"]), None);
    }
}
