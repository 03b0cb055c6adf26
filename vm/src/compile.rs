//! The compiler: resolved syntax tree to register bytecode.
//!
//! One [`FnCompiler`] per function (and one for the top level), with one
//! method per kind of statement and expression. Locals live in the first
//! registers of the frame, so reading a local costs nothing; temporaries
//! are allocated above them like a stack and released after each
//! statement. An assignment to a local evaluates its value straight into
//! the local's register unless the value would be built there before the
//! old value is read (`x = {"k": x}`); then it goes through a temporary.
//! Universal and predeclared names become constants. A local whose
//! assignment does not provably precede a use gets a `CheckBound` before
//! that use, so the common case pays nothing for starlark-go's "referenced
//! before assignment" check. The tree's depth is bounded by the parser,
//! which bounds this recursion.

use crate::error::{Error, Result};
use crate::heap::Heap;
use crate::opcode::*;
use crate::template::Template;
use crate::value::Value;
use bumpalo::collections::Vec as BumpVec;
use codemode_lang::ast::*;
use rustc_hash::FxHashMap;
use std::cell::{Cell, RefCell};

/// Compiles a resolved module. `predeclared` and `universal` are the values
/// of the names the resolver was given, in the same order.
pub fn compile_module<'h>(
    heap: Heap<'h>,
    module: &'h Module<'h>,
    predeclared: &[Value<'h>],
    universal: &[Value<'h>],
) -> Result<&'h Code<'h>> {
    let scope = module
        .scope
        .get()
        .ok_or_else(|| Error::msg("internal error: module not resolved"))?;
    let env = Env {
        heap,
        predeclared,
        universal,
        strs: RefCell::new(FxHashMap::default()),
    };
    let mut c = FnCompiler::new(&env, scope, "<toplevel>", 0)?;
    c.stmts(module.stmts)?;
    // The top level returns None (constant 0).
    c.emit(Instr::Return { src: RK_CONST }, 0)?;
    let code = c.finish(Params::default(), 0)?;
    // The interpreter relies on these facts for unchecked accesses.
    crate::verify::verify(code)?;
    Ok(code)
}

struct Env<'h, 'e> {
    heap: Heap<'h>,
    predeclared: &'e [Value<'h>],
    universal: &'e [Value<'h>],
    /// The module's string constants, one object per text across all its
    /// functions: a key written in one function and looked up in another
    /// is then the same object, which dict lookups compare by address
    /// before comparing text, and whose hash is computed here once.
    strs: RefCell<FxHashMap<&'h str, Value<'h>>>,
}

impl<'h> Env<'h, '_> {
    /// The module's one string object for `text`, with its dict-key hash
    /// when the text is short.
    fn str_const(&self, text: &'h str) -> Result<Value<'h>> {
        if let Some(&v) = self.strs.borrow().get(text) {
            return Ok(v);
        }
        let v = self.heap.str_in_arena(text)?;
        if text.len() <= crate::budget::WORK_CHECK_BYTES {
            // Free of charge at this length (a longer text is hashed, and
            // charged, at its first use as a key).
            crate::hash::hash_in(self.heap.budget, v)?;
        }
        self.strs.borrow_mut().insert(text, v);
        Ok(v)
    }
}

/// The innermost enclosing loop.
struct LoopCtx {
    /// `continue` jumps to patch to the loop's test.
    continues: Vec<usize>,
    /// `break` jumps to patch to the loop's end.
    breaks: Vec<usize>,
}

#[derive(Hash, PartialEq, Eq, Clone, Copy)]
enum ConstKey<'h> {
    None,
    Int(i64),
    Float(u64),
    Str(&'h str),
    Global(u32),
}

/// The most items of a tuple or list display made of constants that is
/// one constant (see `FnCompiler::const_items`).
const CONST_ITEMS: usize = 16;

/// Whether `FnCompiler::const_of` makes a constant of `e` (without making
/// it).
fn is_constant(e: &Expr<'_>) -> bool {
    match &e.kind {
        ExprKind::Literal(_) => true,
        ExprKind::Paren(x) => is_constant(x),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            x,
            ..
        } => match &x.kind {
            ExprKind::Literal(Literal::Int(i)) => *i != i64::MIN,
            ExprKind::Literal(Literal::Float(_)) => true,
            _ => folded_int(e, FOLD_DEPTH).is_some(),
        },
        ExprKind::Binary { .. } => folded_int(e, FOLD_DEPTH).is_some(),
        ExprKind::Ident(id) => matches!(
            id.binding.get(),
            Binding::Universal(_) | Binding::Predeclared(_)
        ),
        ExprKind::Tuple(items) => is_constant_items(items),
        _ => false,
    }
}

/// How deep [`folded_int`] looks into an expression: deep enough for the
/// arithmetic people write on literals (`60 * 60 * 24`, `N // 2 + 1`),
/// shallow enough that trying every level of a long chain of operators
/// stays linear in its length.
const FOLD_DEPTH: u32 = 8;

/// The value of `e` when it is int arithmetic (`+`, `-`, `*`, `//`, `%`,
/// unary `-`) on int literals whose every step gives an int of 64 bits
/// without error, as the interpreter would compute it; `None` for anything
/// else, which is then evaluated when it runs (so a division by zero or an
/// overflow into a big int still happens there, and is reported there).
fn folded_int(e: &Expr<'_>, depth: u32) -> Option<i64> {
    if depth == 0 {
        return None;
    }
    let v = match &e.kind {
        ExprKind::Literal(Literal::Int(i)) => *i,
        ExprKind::Paren(x) => folded_int(x, depth - 1)?,
        ExprKind::Unary {
            op: UnaryOp::Neg,
            x,
            ..
        } => folded_int(x, depth - 1)?.checked_neg()?,
        ExprKind::Binary { op, l, r, .. } => {
            let a = folded_int(l, depth - 1)?;
            let b = folded_int(r, depth - 1)?;
            match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                BinOp::FloorDiv => crate::interp::floor_div(a, b)?,
                BinOp::Mod => crate::interp::floor_mod(a, b)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    // The least int is left to the interpreter, as its literal is.
    (v != i64::MIN).then_some(v)
}

/// Whether the items of a display are 1 to [`CONST_ITEMS`] constants.
fn is_constant_items(items: &[&Expr<'_>]) -> bool {
    (1..=CONST_ITEMS).contains(&items.len()) && items.iter().all(|x| is_constant(x))
}

/// How many keyed constants [`ConstIndex`] scans before it builds a table.
const CONST_SCAN: usize = 24;

/// The index of a function's deduplicated constants: a list scanned while
/// short (most functions have a dozen constants, for which hashing cost
/// more than comparing), a hash table once it grows past [`CONST_SCAN`].
struct ConstIndex<'h> {
    list: BumpVec<'h, (ConstKey<'h>, u16)>,
    table: FxHashMap<ConstKey<'h>, u16>,
}

impl<'h> ConstIndex<'h> {
    fn get(&self, key: &ConstKey<'h>) -> Option<u16> {
        if self.table.is_empty() {
            self.list.iter().find(|(k, _)| k == key).map(|&(_, i)| i)
        } else {
            self.table.get(key).copied()
        }
    }

    fn insert(&mut self, key: ConstKey<'h>, i: u16) {
        if self.table.is_empty() {
            if self.list.len() < CONST_SCAN {
                self.list.push((key, i));
                return;
            }
            self.table.extend(self.list.iter().copied());
        }
        self.table.insert(key, i);
    }
}

struct FnCompiler<'h, 'e> {
    env: &'e Env<'h, 'e>,
    name: &'h str,
    pos: Pos,
    // The code's parts are built in the arena, where the finished code
    // keeps them without a copy.
    instrs: BumpVec<'h, Instr>,
    positions: BumpVec<'h, Pos>,
    consts: BumpVec<'h, Value<'h>>,
    const_index: ConstIndex<'h>,
    sites: BumpVec<'h, CallSite<'h>>,
    /// Index sites numbered so far (see [`Code::hints`]).
    hints: usize,
    templates: BumpVec<'h, Template<'h>>,
    records: BumpVec<'h, Record<'h>>,
    functions: BumpVec<'h, &'h Code<'h>>,
    locals: &'h [Local<'h>],
    freevars: &'h [FreeVar<'h>],
    /// Whether each local is certainly assigned at this point of the code.
    bound: Vec<bool>,
    next_reg: usize,
    max_reg: usize,
    loops: Vec<LoopCtx>,
}

/// Whether every key of a dict display is a string literal, no two alike
/// (then no key can be present when it is set).
fn distinct_str_literals(entries: &[DictEntry<'_>]) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    entries.iter().all(|e| {
        let mut key = e.key;
        while let ExprKind::Paren(x) = &key.kind {
            key = x;
        }
        matches!(&key.kind, ExprKind::Literal(Literal::String(s)) if seen.insert(*s))
    })
}

/// The most hint cells a function's code has (see [`Code::hints`]).
const HINT_CELLS: usize = 1 << 16;

fn too_large(pos: Pos) -> Error {
    Error::msg("function too large to compile").at(pos)
}

impl<'h, 'e> FnCompiler<'h, 'e> {
    fn new(
        env: &'e Env<'h, 'e>,
        scope: &'h Scope<'h>,
        name: &'h str,
        pos: Pos,
    ) -> Result<FnCompiler<'h, 'e>> {
        let n = scope.locals.len();
        if n > MAX_OPERAND {
            return Err(too_large(pos));
        }
        let bump = env.heap.bump;
        let mut c = FnCompiler {
            env,
            name,
            pos,
            instrs: BumpVec::with_capacity_in(64, bump),
            positions: BumpVec::with_capacity_in(64, bump),
            consts: BumpVec::with_capacity_in(16, bump),
            const_index: ConstIndex {
                list: BumpVec::with_capacity_in(CONST_SCAN, bump),
                table: FxHashMap::default(),
            },
            sites: BumpVec::with_capacity_in(16, bump),
            hints: 0,
            templates: BumpVec::new_in(bump),
            records: BumpVec::new_in(bump),
            functions: BumpVec::new_in(bump),
            locals: scope.locals,
            freevars: scope.freevars,
            bound: vec![false; n],
            next_reg: n,
            max_reg: n,
            loops: Vec::new(),
        };
        // Constant 0 is always None (the implicit return value).
        c.konst(ConstKey::None, Value::None)?;
        Ok(c)
    }

    fn finish(self, params: Params<'h>, entry_pos: Pos) -> Result<&'h Code<'h>> {
        let bump = self.env.heap.bump;
        let cells = BumpVec::from_iter_in(
            self.locals
                .iter()
                .enumerate()
                .filter(|(_, l)| l.is_cell)
                .map(|(i, _)| i as Reg),
            bump,
        )
        .into_bump_slice();
        let freevars = bump.alloc_slice_fill_iter(self.freevars.iter().map(|f| {
            let src = match f.outer {
                Binding::Free(i) => FreeSource::Free(i as u16),
                Binding::Cell(i) | Binding::Local(i) => FreeSource::Local(i as Reg),
                _ => FreeSource::Free(u16::MAX),
            };
            (f.name, src)
        }));
        let local_names = bump.alloc_slice_fill_iter(self.locals.iter().map(|l| l.name));
        let code = Code {
            name: self.name,
            pos: self.pos,
            entry_pos,
            instrs: self.instrs.into_bump_slice(),
            positions: self.positions.into_bump_slice(),
            consts: self.consts.into_bump_slice(),
            sites: self.sites.into_bump_slice(),
            hints: bump.alloc_slice_fill_with(self.hints.min(HINT_CELLS), |_| Cell::new(0)),
            templates: self.templates.into_bump_slice(),
            records: self.records.into_bump_slice(),
            functions: self.functions.into_bump_slice(),
            params,
            nregs: self.max_reg as u16,
            local_names,
            cells,
            freevars,
            active: Cell::new(false),
            fast_arity: params.fast_arity(cells),
        };
        Ok(bump.alloc(code))
    }

    // ---- emission helpers -------------------------------------------------

    /// A hint cell for a new index site: its own while there are fewer
    /// than [`HINT_CELLS`], then shared (a hint is only a guess, checked
    /// before use, so sharing costs speed, never correctness).
    fn hint(&mut self) -> u16 {
        let h = self.hints % HINT_CELLS;
        self.hints += 1;
        h as u16
    }

    fn emit(&mut self, i: Instr, pos: Pos) -> Result<usize> {
        if self.instrs.len() >= u32::MAX as usize {
            return Err(too_large(pos));
        }
        let i = self.with_int_operand(i);
        self.instrs.push(i);
        self.positions.push(pos);
        Ok(self.instrs.len() - 1)
    }

    /// `i` in its int-operand form when its `b` is a small int constant
    /// (see [`Instr::with_int_operand`]).
    fn with_int_operand(&self, i: Instr) -> Instr {
        i.with_int_operand(|k| match self.consts.get(usize::from(k)) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        })
        .unwrap_or(i)
    }

    fn here(&self) -> u32 {
        self.instrs.len() as u32
    }

    /// Points the jump at `at` to the current end of the code.
    fn patch(&mut self, at: usize) {
        let to = self.here();
        match &mut self.instrs[at] {
            Instr::Jump { to: t }
            | Instr::JumpIfFalse { to: t, .. }
            | Instr::JumpIfTrue { to: t, .. } => *t = to,
            _ => {}
        }
    }

    fn temp(&mut self, pos: Pos) -> Result<Reg> {
        self.temps(1, pos)
    }

    /// Allocates `n` consecutive temporaries.
    fn temps(&mut self, n: usize, pos: Pos) -> Result<Reg> {
        let base = self.next_reg;
        self.next_reg += n;
        if self.next_reg > MAX_OPERAND {
            return Err(too_large(pos));
        }
        self.max_reg = self.max_reg.max(self.next_reg);
        Ok(base as Reg)
    }

    fn konst(&mut self, key: ConstKey<'h>, v: Value<'h>) -> Result<u16> {
        if let Some(k) = self.const_index.get(&key) {
            return Ok(k);
        }
        self.konst_new(key, v)
    }

    /// A constant whose key is not in the index yet.
    fn konst_new(&mut self, key: ConstKey<'h>, v: Value<'h>) -> Result<u16> {
        let k = self.consts.len();
        if k > MAX_OPERAND {
            return Err(too_large(self.pos));
        }
        self.consts.push(v);
        self.const_index.insert(key, k as u16);
        Ok(k as u16)
    }

    /// A constant that is not deduplicated (values without a key).
    fn konst_value(&mut self, v: Value<'h>) -> Result<u16> {
        let k = self.consts.len();
        if k > MAX_OPERAND {
            return Err(too_large(self.pos));
        }
        self.consts.push(v);
        Ok(k as u16)
    }

    fn str_const(&mut self, s: &'h str) -> Result<u16> {
        if let Some(k) = self.const_index.get(&ConstKey::Str(s)) {
            return Ok(k);
        }
        let v = self.env.str_const(s)?;
        self.konst_new(ConstKey::Str(s), v)
    }

    fn literal_const(&mut self, lit: &Literal<'h>) -> Result<u16> {
        match *lit {
            Literal::Int(i) => self.konst(ConstKey::Int(i), Value::Int(i)),
            Literal::Float(f) => self.konst(ConstKey::Float(f.to_bits()), Value::Float(f)),
            Literal::String(s) => self.str_const(s),
            Literal::Bytes(b) => {
                let v = self.env.heap.bytes(b)?;
                self.konst_value(v)
            }
            Literal::BigInt { digits, radix } => {
                let n = num_bigint::BigInt::parse_bytes(digits.as_bytes(), radix)
                    .ok_or_else(|| Error::msg("invalid int literal"))?;
                let v = self.env.heap.int(n)?;
                self.konst_value(v)
            }
        }
    }

    // ---- statements -------------------------------------------------------

    fn stmts(&mut self, stmts: &'h [&'h Stmt<'h>]) -> Result<()> {
        for s in stmts {
            let mark = self.next_reg;
            self.stmt(s)?;
            self.next_reg = mark;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &'h Stmt<'h>) -> Result<()> {
        let pos = s.span.start;
        match &s.kind {
            StmtKind::Expr(e) => {
                let t = self.temp(pos)?;
                self.expr_to(e, t)
            }
            StmtKind::Assign {
                lhs,
                op: AssignOp::Eq,
                rhs,
                op_pos,
            } => self.assign(lhs, rhs, *op_pos),
            StmtKind::Assign {
                lhs,
                op: AssignOp::Aug(op),
                rhs,
                op_pos,
            } => self.aug_assign(lhs, *op, rhs, *op_pos),
            StmtKind::Def { name, func } => {
                let t = self.temp(pos)?;
                self.function(func, t)?;
                self.store_var(name, t, pos)
            }
            StmtKind::If { cond, then, els } => {
                let c = self.operand_reg(cond)?;
                let jf = self.emit(Instr::JumpIfFalse { cond: c, to: 0 }, pos)?;
                let before = self.bound.clone();
                self.stmts(then)?;
                if els.is_empty() {
                    self.patch(jf);
                    self.bound = before;
                } else {
                    let after_then = std::mem::replace(&mut self.bound, before);
                    let j = self.emit(Instr::Jump { to: 0 }, pos)?;
                    self.patch(jf);
                    self.stmts(els)?;
                    self.patch(j);
                    for (b, t) in self.bound.iter_mut().zip(after_then) {
                        *b = *b && t;
                    }
                }
                Ok(())
            }
            StmtKind::For { vars, iter, body } => {
                // Inverted loop: the test sits at the bottom and jumps back
                // into the body, so an iteration costs no extra jump.
                let src = self.operand_reg(iter)?;
                let it = self.temps(ITER_REGS, pos)?;
                self.emit(Instr::IterStart { dst: it, src }, pos)?;
                let before = self.bound.clone();
                let direct = self.plain_local(vars);
                let dst = match direct {
                    Some(r) => r,
                    None => self.temp(pos)?,
                };
                let to_test = self.emit(Instr::Jump { to: 0 }, pos)?;
                let top = self.here();
                if let Some(r) = direct {
                    self.bound[r as usize] = true;
                } else {
                    self.assign_from(vars, dst, pos)?;
                }
                self.loops.push(LoopCtx {
                    continues: Vec::new(),
                    breaks: Vec::new(),
                });
                self.stmts(body)?;
                let ctx = self.loops.pop().unwrap_or(LoopCtx {
                    continues: Vec::new(),
                    breaks: Vec::new(),
                });
                self.patch(to_test);
                for c in ctx.continues {
                    self.patch(c);
                }
                self.emit(
                    Instr::ForNext {
                        iter: it,
                        dst,
                        body: top,
                    },
                    pos,
                )?;
                for b in ctx.breaks {
                    self.patch(b);
                }
                self.emit(Instr::IterEnd { iter: it }, pos)?;
                self.bound = before;
                Ok(())
            }
            StmtKind::Return(value) => {
                let (src, at) = match value {
                    // starlark-go attributes the return to its value.
                    Some(e) => (self.operand(e)?, e.span.start),
                    None => (RK_CONST, pos),
                };
                self.emit(Instr::Return { src }, at)?;
                Ok(())
            }
            StmtKind::Break => {
                let j = self.emit(Instr::Jump { to: 0 }, pos)?;
                match self.loops.last_mut() {
                    Some(l) => l.breaks.push(j),
                    None => return Err(Error::msg("break not in a loop").at(pos)),
                }
                Ok(())
            }
            StmtKind::Continue => {
                let j = self.emit(Instr::Jump { to: 0 }, pos)?;
                match self.loops.last_mut() {
                    Some(l) => l.continues.push(j),
                    None => return Err(Error::msg("continue not in a loop").at(pos)),
                }
                Ok(())
            }
            StmtKind::Pass => Ok(()),
            // The resolver rejects both; a tree that still has them is not
            // compiled.
            StmtKind::Load { .. } => {
                self.emit(Instr::Load, pos)?;
                Ok(())
            }
            StmtKind::While { .. } => Err(Error::msg("while loop not supported").at(pos)),
        }
    }

    /// The register of `e` when it is a local that is not a cell.
    fn plain_local(&self, e: &Expr<'h>) -> Option<Reg> {
        match &e.kind {
            ExprKind::Ident(id) => match id.binding.get() {
                Binding::Local(i) => Some(i as Reg),
                _ => None,
            },
            ExprKind::Paren(x) => self.plain_local(x),
            _ => None,
        }
    }

    fn assign(&mut self, lhs: &'h Expr<'h>, rhs: &'h Expr<'h>, op_pos: Pos) -> Result<()> {
        if let Some(r) = self.plain_local(lhs) {
            if evaluates_into(rhs, r) {
                self.expr_to(rhs, r)?;
            } else {
                let t = self.temp(op_pos)?;
                self.expr_to(rhs, t)?;
                self.emit(Instr::Move { dst: r, src: t }, op_pos)?;
            }
            self.bound[r as usize] = true;
            return Ok(());
        }
        let v = self.operand_reg(rhs)?;
        self.assign_from(lhs, v, op_pos)
    }

    /// Assigns the value in register `v` to the target `lhs`.
    fn assign_from(&mut self, lhs: &'h Expr<'h>, v: Reg, pos: Pos) -> Result<()> {
        match &lhs.kind {
            ExprKind::Ident(id) => self.store_var(id, v, pos),
            ExprKind::Paren(x) => self.assign_from(x, v, pos),
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                let n = items.len();
                if n > MAX_OPERAND {
                    return Err(too_large(pos));
                }
                // Targets that are plain locals in consecutive registers
                // (`for k, v in ...`, `a, b = ...`) are unpacked into
                // directly, without a move each.
                let first = items.first().and_then(|x| self.plain_local(x));
                if let Some(first) = first.filter(|&f| {
                    items
                        .iter()
                        .enumerate()
                        .all(|(k, x)| self.plain_local(x) == Some(f + k as Reg))
                }) {
                    self.emit(
                        Instr::Unpack {
                            base: first,
                            src: v,
                            n: n as u16,
                        },
                        pos,
                    )?;
                    for k in 0..n {
                        self.bound[first as usize + k] = true;
                    }
                    return Ok(());
                }
                let base = self.temps(n, pos)?;
                self.emit(
                    Instr::Unpack {
                        base,
                        src: v,
                        n: n as u16,
                    },
                    pos,
                )?;
                for (k, item) in items.iter().enumerate() {
                    self.assign_from(item, base + k as Reg, pos)?;
                }
                Ok(())
            }
            ExprKind::Index { x, index, lbrack } => {
                let xr = self.operand_reg(x)?;
                let i = self.operand(index)?;
                let hint = self.hint();
                self.emit(
                    Instr::SetIndex {
                        x: xr,
                        i,
                        src: v,
                        hint,
                    },
                    *lbrack,
                )?;
                Ok(())
            }
            ExprKind::Dot { x, name, dot } => {
                let xr = self.operand_reg(x)?;
                let k = self.str_const(name.name)?;
                self.emit(
                    Instr::SetAttr {
                        x: xr,
                        name: k,
                        src: v,
                    },
                    *dot,
                )?;
                Ok(())
            }
            _ => Err(Error::msg("cannot assign to this expression").at(lhs.span.start)),
        }
    }

    fn aug_assign(
        &mut self,
        lhs: &'h Expr<'h>,
        op: BinOp,
        rhs: &'h Expr<'h>,
        op_pos: Pos,
    ) -> Result<()> {
        match &lhs.kind {
            ExprKind::Paren(x) => self.aug_assign(x, op, rhs, op_pos),
            ExprKind::Ident(id) => {
                let cur = self.operand_reg(lhs)?;
                let r = self.operand(rhs)?;
                let dst = match self.plain_local(lhs) {
                    Some(l) => l,
                    None => cur,
                };
                self.emit(binary_instr(op, dst, cur, r, true), op_pos)?;
                if self.plain_local(lhs).is_none() {
                    self.store_var(id, dst, op_pos)?;
                }
                Ok(())
            }
            ExprKind::Index { x, index, lbrack } => {
                let xr = self.operand_reg(x)?;
                let i = self.operand(index)?;
                let cur = self.temp(op_pos)?;
                // The read and the write find the key at one place.
                let hint = self.hint();
                self.emit(
                    Instr::Index {
                        dst: cur,
                        x: xr,
                        i,
                        hint,
                    },
                    *lbrack,
                )?;
                let r = self.operand(rhs)?;
                self.emit(binary_instr(op, cur, cur, r, true), op_pos)?;
                self.emit(
                    Instr::SetIndex {
                        x: xr,
                        i,
                        src: cur,
                        hint,
                    },
                    *lbrack,
                )?;
                Ok(())
            }
            ExprKind::Dot { x, name, dot } => {
                let xr = self.operand_reg(x)?;
                let k = self.str_const(name.name)?;
                let cur = self.temp(op_pos)?;
                self.emit(
                    Instr::GetAttr {
                        dst: cur,
                        x: xr,
                        name: k,
                    },
                    *dot,
                )?;
                let r = self.operand(rhs)?;
                self.emit(binary_instr(op, cur, cur, r, true), op_pos)?;
                self.emit(
                    Instr::SetAttr {
                        x: xr,
                        name: k,
                        src: cur,
                    },
                    *dot,
                )?;
                Ok(())
            }
            _ => Err(Error::msg("cannot assign to this expression").at(lhs.span.start)),
        }
    }

    /// Stores register `v` into the variable `id`.
    fn store_var(&mut self, id: &'h Ident<'h>, v: Reg, pos: Pos) -> Result<()> {
        match id.binding.get() {
            Binding::Local(i) => {
                if i as Reg != v {
                    self.emit(
                        Instr::Move {
                            dst: i as Reg,
                            src: v,
                        },
                        pos,
                    )?;
                }
                self.bound[i as usize] = true;
            }
            Binding::Cell(i) => {
                self.emit(
                    Instr::StoreCell {
                        slot: i as Reg,
                        src: v,
                    },
                    pos,
                )?;
            }
            Binding::Global(g) => {
                self.emit(
                    Instr::StoreGlobal {
                        g: g as u16,
                        src: v,
                    },
                    pos,
                )?;
            }
            b => {
                return Err(Error::msg(format!(
                    "internal error: cannot assign to {} ({b:?})",
                    id.name
                ))
                .at(pos))
            }
        }
        Ok(())
    }

    // ---- expressions ------------------------------------------------------

    /// The constant `e` denotes, if it is a literal, a negated number
    /// literal, or a universal or predeclared name.
    fn const_of(&mut self, e: &'h Expr<'h>) -> Result<Option<u16>> {
        let k = match &e.kind {
            ExprKind::Literal(lit) => self.literal_const(lit)?,
            ExprKind::Paren(x) => return self.const_of(x),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                x,
                ..
            } => match &x.kind {
                ExprKind::Literal(Literal::Int(i)) if *i != i64::MIN => {
                    self.konst(ConstKey::Int(-i), Value::Int(-i))?
                }
                ExprKind::Literal(Literal::Float(f)) => {
                    let f = -f;
                    self.konst(ConstKey::Float(f.to_bits()), Value::Float(f))?
                }
                _ => return self.folded_const(e),
            },
            ExprKind::Binary { .. } => return self.folded_const(e),
            ExprKind::Ident(id) => match id.binding.get() {
                Binding::Universal(_) | Binding::Predeclared(_) => self.var_const(id)?,
                _ => return Ok(None),
            },
            // A tuple of constants is a constant: it is immutable, and no
            // program can tell one such tuple from another.
            ExprKind::Tuple(items) => return self.const_items(items),
            _ => return Ok(None),
        };
        Ok(Some(k))
    }

    /// The constant of int arithmetic on literals ([`folded_int`]).
    fn folded_const(&mut self, e: &'h Expr<'h>) -> Result<Option<u16>> {
        match folded_int(e, FOLD_DEPTH) {
            Some(i) => self.konst(ConstKey::Int(i), Value::Int(i)).map(Some),
            None => Ok(None),
        }
    }

    /// A constant tuple of `items` when there are 1 to [`CONST_ITEMS`] and
    /// every one is a constant (a tuple display that is a constant, and
    /// the items of a list display made by [`Instr::ListOf`]).
    fn const_items(&mut self, items: &'h [&'h Expr<'h>]) -> Result<Option<u16>> {
        // Checked first, so that a display that is not all constants
        // leaves no constants behind for its constant parts.
        if !is_constant_items(items) {
            return Ok(None);
        }
        let mut values = [Value::None; CONST_ITEMS];
        for (slot, x) in values.iter_mut().zip(items) {
            match self.const_of(x)? {
                Some(k) => *slot = self.consts[k as usize],
                None => return Ok(None),
            }
        }
        let t = self.env.heap.tuple(&values[..items.len()])?;
        self.konst_value(t).map(Some)
    }

    /// The constant holding a universal or predeclared name's value.
    fn var_const(&mut self, id: &'h Ident<'h>) -> Result<u16> {
        let (key, v) = match id.binding.get() {
            Binding::Universal(u) => (
                ConstKey::Global(u | 0x8000_0000),
                self.env.universal.get(u as usize).copied(),
            ),
            Binding::Predeclared(p) => (
                ConstKey::Global(p),
                self.env.predeclared.get(p as usize).copied(),
            ),
            _ => (ConstKey::None, None),
        };
        let v = v.ok_or_else(|| Error::msg("internal error: unknown name").at(id.span.start))?;
        self.konst(key, v)
    }

    /// An operand for `e`: a constant, a local's register, or a temporary
    /// holding its value.
    fn operand(&mut self, e: &'h Expr<'h>) -> Result<Rk> {
        match self.const_of(e)? {
            Some(k) => Ok(RK_CONST | k),
            None => self.operand_reg(e),
        }
    }

    /// A register holding the value of `e` (a local's own register when
    /// possible).
    fn operand_reg(&mut self, e: &'h Expr<'h>) -> Result<Reg> {
        if let ExprKind::Paren(x) = &e.kind {
            return self.operand_reg(x);
        }
        if let ExprKind::Ident(id) = &e.kind {
            if let Binding::Local(i) = id.binding.get() {
                self.check_bound(i, id)?;
                return Ok(i as Reg);
            }
        }
        let t = self.temp(e.span.start)?;
        self.expr_to(e, t)?;
        Ok(t)
    }

    fn check_bound(&mut self, i: u32, id: &'h Ident<'h>) -> Result<()> {
        if !self.bound[i as usize] {
            let name = self.str_const(id.name)?;
            self.emit(
                Instr::CheckBound {
                    reg: i as Reg,
                    name,
                },
                id.span.start,
            )?;
            self.bound[i as usize] = true;
        }
        Ok(())
    }

    /// Evaluates `e` into register `dst`.
    fn expr_to(&mut self, e: &'h Expr<'h>, dst: Reg) -> Result<()> {
        let mark = self.next_reg;
        self.expr_to_inner(e, dst)?;
        self.next_reg = mark;
        Ok(())
    }

    fn expr_to_inner(&mut self, e: &'h Expr<'h>, dst: Reg) -> Result<()> {
        let pos = e.span.start;
        if let ExprKind::Binary { .. } = e.kind {
            // Int arithmetic on literals, folded when compiled.
            if let Some(k) = self.folded_const(e)? {
                self.emit(Instr::Const { dst, k }, pos)?;
                return Ok(());
            }
        }
        match &e.kind {
            ExprKind::Ident(id) => self.load_var(id, dst),
            ExprKind::Paren(x) => self.expr_to_inner(x, dst),
            ExprKind::Literal(_) | ExprKind::Unary { .. } => {
                if let Some(k) = self.const_of(e)? {
                    self.emit(Instr::Const { dst, k }, pos)?;
                    return Ok(());
                }
                let ExprKind::Unary { op, x, op_pos } = &e.kind else {
                    return Err(Error::msg("internal error: bad literal").at(pos));
                };
                let src = self.operand_reg(x)?;
                let i = match op {
                    UnaryOp::Neg => Instr::Neg { dst, src },
                    UnaryOp::Plus => Instr::Plus { dst, src },
                    UnaryOp::Invert => Instr::Invert { dst, src },
                    UnaryOp::Not => Instr::Not { dst, src },
                };
                self.emit(i, *op_pos)?;
                Ok(())
            }
            ExprKind::List(items) => {
                if let Some(k) = self.const_items(items)? {
                    self.emit(Instr::ListOf { dst, k }, pos)?;
                    return Ok(());
                }
                let (base, n) = self.consecutive(items, pos)?;
                self.emit(Instr::MakeList { dst, base, n }, pos)?;
                Ok(())
            }
            ExprKind::Tuple(items) => {
                if let Some(k) = self.const_items(items)? {
                    self.emit(Instr::Const { dst, k }, pos)?;
                    return Ok(());
                }
                let (base, n) = self.consecutive(items, pos)?;
                self.emit(Instr::MakeTuple { dst, base, n }, pos)?;
                Ok(())
            }
            ExprKind::Dict(entries) => {
                if self.record(entries, dst, pos)? {
                    return Ok(());
                }
                let n = entries.len().min(MAX_OPERAND) as u16;
                self.emit(Instr::MakeDict { dst, n }, pos)?;
                let known_new = distinct_str_literals(entries);
                for ent in entries.iter() {
                    let mark = self.next_reg;
                    // Distinct string literals are constants, named by the
                    // instruction itself.
                    let literal = if known_new {
                        self.const_of(ent.key)?
                    } else {
                        None
                    };
                    let set = match literal {
                        Some(k) => {
                            let src = self.operand_reg(ent.value)?;
                            Instr::DictPushNew { dict: dst, k, src }
                        }
                        None => {
                            let key = self.operand_reg(ent.key)?;
                            let src = self.operand_reg(ent.value)?;
                            Instr::DictSetUnique {
                                dict: dst,
                                key,
                                src,
                            }
                        }
                    };
                    self.emit(set, ent.colon)?;
                    self.next_reg = mark;
                }
                Ok(())
            }
            ExprKind::ListComp { body, clauses } => {
                self.emit(Instr::MakeList { dst, base: 0, n: 0 }, pos)?;
                self.comprehension(clauses, dst, &|c, acc| {
                    let v = c.operand_reg(body)?;
                    c.emit(Instr::ListAppend { list: acc, src: v }, body.span.start)?;
                    Ok(())
                })
            }
            ExprKind::DictComp {
                key,
                value,
                clauses,
                colon,
            } => {
                self.emit(Instr::MakeDict { dst, n: 0 }, pos)?;
                let colon = *colon;
                self.comprehension(clauses, dst, &|c, acc| {
                    let k = c.operand_reg(key)?;
                    let v = c.operand_reg(value)?;
                    c.emit(
                        Instr::DictSet {
                            dict: acc,
                            key: k,
                            src: v,
                        },
                        colon,
                    )?;
                    Ok(())
                })
            }
            ExprKind::Cond {
                then,
                cond,
                els,
                if_pos,
            } => {
                let c = self.operand_reg(cond)?;
                let jf = self.emit(Instr::JumpIfFalse { cond: c, to: 0 }, *if_pos)?;
                // Only one branch runs: a local is certainly assigned
                // after the expression only if both branches checked it.
                let before = self.bound.clone();
                self.expr_to(then, dst)?;
                let after_then = std::mem::replace(&mut self.bound, before);
                let j = self.emit(Instr::Jump { to: 0 }, *if_pos)?;
                self.patch(jf);
                self.expr_to(els, dst)?;
                self.patch(j);
                for (b, t) in self.bound.iter_mut().zip(after_then) {
                    *b = *b && t;
                }
                Ok(())
            }
            ExprKind::Lambda(func) => self.function(func, dst),
            ExprKind::Call { func, args, lparen } => self.call(func, args, *lparen, dst),
            ExprKind::Index { x, index, lbrack } => {
                let xr = self.operand_reg(x)?;
                let i = self.operand(index)?;
                let hint = self.hint();
                self.emit(
                    Instr::Index {
                        dst,
                        x: xr,
                        i,
                        hint,
                    },
                    *lbrack,
                )?;
                Ok(())
            }
            ExprKind::Slice {
                x,
                lo,
                hi,
                step,
                lbrack,
            } => {
                let base = self.temps(4, *lbrack)?;
                self.expr_to(x, base)?;
                for (k, part) in [lo, hi, step].into_iter().enumerate() {
                    let r = base + 1 + k as Reg;
                    match part {
                        Some(p) => self.expr_to(p, r)?,
                        None => {
                            self.emit(Instr::Const { dst: r, k: 0 }, *lbrack)?;
                        }
                    }
                }
                let pos = [Some(*x), *lo, *hi, *step]
                    .into_iter()
                    .flatten()
                    .filter_map(last_pos)
                    .last()
                    .unwrap_or(*lbrack);
                self.emit(Instr::Slice { dst, base }, pos)?;
                Ok(())
            }
            ExprKind::Dot { x, name, dot } => {
                let xr = self.operand_reg(x)?;
                let k = self.str_const(name.name)?;
                self.emit(
                    Instr::GetAttr {
                        dst,
                        x: xr,
                        name: k,
                    },
                    *dot,
                )?;
                Ok(())
            }
            ExprKind::Binary { op, l, r, op_pos } => match op {
                BinOp::And | BinOp::Or => {
                    self.expr_to(l, dst)?;
                    let j = if *op == BinOp::And {
                        Instr::JumpIfFalse { cond: dst, to: 0 }
                    } else {
                        Instr::JumpIfTrue { cond: dst, to: 0 }
                    };
                    let j = self.emit(j, *op_pos)?;
                    // The right operand may not run: what it checks does
                    // not count afterwards.
                    let before = self.bound.clone();
                    self.expr_to(r, dst)?;
                    self.bound = before;
                    self.patch(j);
                    Ok(())
                }
                BinOp::Add => self.plus(e, dst),
                BinOp::Mod if self.percent(l, r, dst, *op_pos)? => Ok(()),
                _ => {
                    let a = self.operand(l)?;
                    let b = self.operand(r)?;
                    self.emit(binary_instr(*op, dst, a, b, false), *op_pos)?;
                    Ok(())
                }
            },
        }
    }

    /// `l % r` as a [`Instr::Percent`] when `l` is a string literal that
    /// reads as a [`Template`] and `r` is not a constant (whose operand
    /// the general instruction names without a load): `r`'s items in
    /// registers when it is a tuple display of as many items as the
    /// template has conversions, else `r`'s value. Whether it was.
    fn percent(&mut self, l: &'h Expr<'h>, r: &'h Expr<'h>, dst: Reg, pos: Pos) -> Result<bool> {
        let mut lit = l;
        while let ExprKind::Paren(x) = &lit.kind {
            lit = x;
        }
        let ExprKind::Literal(Literal::String(text)) = &lit.kind else {
            return Ok(false);
        };
        if self.templates.len() > u16::MAX as usize || self.const_of(r)?.is_some() {
            return Ok(false);
        }
        let Some((pieces, nconv)) = crate::template::parse(text.as_bytes()) else {
            return Ok(false);
        };
        let mut items = r;
        while let ExprKind::Paren(x) = &items.kind {
            items = x;
        }
        let spread = matches!(&items.kind, ExprKind::Tuple(xs) if xs.len() == nconv as usize);
        // `l` is a literal: evaluating it first, as the operator does, has
        // no effect to keep.
        let src = match &items.kind {
            ExprKind::Tuple(xs) if spread => self.consecutive(xs, pos)?.0,
            _ => self.operand_reg(r)?,
        };
        let bump = self.env.heap.bump;
        let t = self.templates.len() as u16;
        self.templates.push(Template::new(
            text.as_bytes(),
            bump.alloc_slice_copy(&pieces),
            nconv,
            spread,
        ));
        self.emit(Instr::Percent { dst, t, src }, pos)?;
        Ok(true)
    }

    /// A dict display of 1 to [`RECORD_KEYS`] distinct string literal keys
    /// as one [`Instr::MakeRecord`]: each value as an operand, in order (a
    /// local is read where it is: no expression writes a local of its
    /// function, a comprehension's variables being its own), then the
    /// dict. Whether it was.
    fn record(&mut self, entries: &'h [DictEntry<'h>], dst: Reg, pos: Pos) -> Result<bool> {
        if entries.is_empty()
            || entries.len() > RECORD_KEYS
            || self.records.len() > u16::MAX as usize
            || !distinct_str_literals(entries)
        {
            return Ok(false);
        }
        let bump = self.env.heap.bump;
        let mut keys = BumpVec::with_capacity_in(entries.len(), bump);
        let mut hashes = BumpVec::with_capacity_in(entries.len(), bump);
        for ent in entries {
            let Some(k) = self.const_of(ent.key)? else {
                return Ok(false);
            };
            let key = self.consts[k as usize];
            keys.push(key);
            hashes.push(crate::hash::hash_in(self.env.heap.budget, key)?);
        }
        let mut srcs = BumpVec::with_capacity_in(entries.len(), bump);
        for ent in entries {
            srcs.push(self.operand_reg(ent.value)?);
        }
        let rec = self.records.len() as u16;
        self.records.push(Record {
            keys: keys.into_bump_slice(),
            hashes: hashes.into_bump_slice(),
            srcs: srcs.into_bump_slice(),
        });
        self.emit(Instr::MakeRecord { dst, rec }, pos)?;
        Ok(true)
    }

    /// A chain of `+`: like starlark-go, adjacent string literals and
    /// adjacent bytes literals are joined at compile time (which is the only
    /// way to add bytes), then the sum is evaluated left to right.
    fn plus(&mut self, e: &'h Expr<'h>, dst: Reg) -> Result<()> {
        let mut summands: Vec<(&'h Expr<'h>, Pos)> = Vec::new();
        let mut cur = e;
        loop {
            match &unparen(cur).kind {
                ExprKind::Binary {
                    op: BinOp::Add,
                    l,
                    r,
                    op_pos,
                } => {
                    summands.push((unparen(r), *op_pos));
                    cur = l;
                }
                _ => {
                    summands.push((unparen(cur), e.span.start));
                    break;
                }
            }
        }
        summands.reverse();
        // Fold runs of literals of the same kind into one constant; other
        // summands are compiled in order, each just before its `+`.
        let mut plan: Vec<(Option<u16>, &'h Expr<'h>, Pos)> = Vec::new();
        let mut i = 0;
        while i < summands.len() {
            let (first, pos) = summands[i];
            let is_str = matches!(first.kind, ExprKind::Literal(Literal::String(_)));
            let is_bytes = matches!(first.kind, ExprKind::Literal(Literal::Bytes(_)));
            if !is_str && !is_bytes {
                plan.push((None, first, pos));
                i += 1;
                continue;
            }
            let mut joined: Vec<u8> = Vec::new();
            let mut j = i;
            while j < summands.len() {
                match &summands[j].0.kind {
                    ExprKind::Literal(Literal::String(t)) if is_str => {
                        joined.extend_from_slice(t.as_bytes())
                    }
                    ExprKind::Literal(Literal::Bytes(b)) if is_bytes => joined.extend_from_slice(b),
                    _ => break,
                }
                j += 1;
            }
            let k = if is_str {
                let text = String::from_utf8(joined)
                    .map_err(|_| Error::msg("internal error: bad string literal"))?;
                let text = self.env.heap.bump.alloc_str(&text);
                self.str_const(text)?
            } else {
                let v = self.env.heap.bytes(&joined)?;
                self.konst_value(v)?
            };
            plan.push((Some(k), first, pos));
            i = j;
        }
        let operand = |c: &mut Self, step: &(Option<u16>, &'h Expr<'h>, Pos)| match step.0 {
            Some(k) => Ok(RK_CONST | k),
            None => c.operand(step.1),
        };
        let first = operand(self, &plan[0])?;
        if plan.len() == 1 {
            if first & RK_CONST != 0 {
                self.emit(
                    Instr::Const {
                        dst,
                        k: first & !RK_CONST,
                    },
                    e.span.start,
                )?;
            } else if first != dst {
                self.emit(Instr::Move { dst, src: first }, e.span.start)?;
            }
            return Ok(());
        }
        // With more than two summands the running sum lives in a temporary,
        // so `dst` (possibly a local read by a later summand) is written last.
        let n = plan.len();
        let acc = if n > 2 { self.temp(e.span.start)? } else { dst };
        let mut a = first;
        for (k, step) in plan.iter().enumerate().skip(1) {
            let b = operand(self, step)?;
            let out = if k == n - 1 { dst } else { acc };
            self.emit(Instr::Add { dst: out, a, b }, step.2)?;
            a = acc;
        }
        Ok(())
    }

    fn load_var(&mut self, id: &'h Ident<'h>, dst: Reg) -> Result<()> {
        let pos = id.span.start;
        match id.binding.get() {
            Binding::Local(i) => {
                self.check_bound(i, id)?;
                if i as Reg != dst {
                    self.emit(Instr::Move { dst, src: i as Reg }, pos)?;
                }
            }
            Binding::Cell(i) => {
                self.emit(
                    Instr::LoadCell {
                        dst,
                        slot: i as Reg,
                    },
                    pos,
                )?;
            }
            Binding::Free(i) => {
                self.emit(Instr::LoadFree { dst, idx: i as u16 }, pos)?;
            }
            Binding::Global(g) => {
                self.emit(Instr::LoadGlobal { dst, g: g as u16 }, pos)?;
            }
            Binding::Predeclared(_) | Binding::Universal(_) => {
                let k = self.var_const(id)?;
                self.emit(Instr::Const { dst, k }, pos)?;
            }
            Binding::Unresolved => {
                return Err(Error::msg(format!("undefined: {}", id.name)).at(pos));
            }
        }
        Ok(())
    }

    /// Evaluates `items` into consecutive temporaries.
    fn consecutive(&mut self, items: &'h [&'h Expr<'h>], pos: Pos) -> Result<(Reg, u16)> {
        let n = items.len();
        if n > MAX_OPERAND {
            return Err(too_large(pos));
        }
        let base = self.temps(n, pos)?;
        for (k, item) in items.iter().enumerate() {
            self.expr_to(item, base + k as Reg)?;
        }
        Ok((base, n as u16))
    }

    /// Compiles the clauses of a comprehension around `body`, which adds
    /// one element to the accumulator in register `acc`.
    fn comprehension(
        &mut self,
        clauses: &'h [Clause<'h>],
        acc: Reg,
        body: &dyn Fn(&mut Self, Reg) -> Result<()>,
    ) -> Result<()> {
        let Some((first, rest)) = clauses.split_first() else {
            return body(self, acc);
        };
        let before = self.bound.clone();
        match first {
            Clause::If { cond, if_pos } => {
                let c = self.operand_reg(cond)?;
                let jf = self.emit(Instr::JumpIfFalse { cond: c, to: 0 }, *if_pos)?;
                self.comprehension(rest, acc, body)?;
                self.patch(jf);
            }
            Clause::For {
                vars,
                iter,
                for_pos,
            } => {
                let mark = self.next_reg;
                let src = self.operand_reg(iter)?;
                let it = self.temps(ITER_REGS, *for_pos)?;
                self.emit(Instr::IterStart { dst: it, src }, *for_pos)?;
                let direct = self.plain_local(vars);
                let dst = match direct {
                    Some(r) => r,
                    None => self.temp(*for_pos)?,
                };
                let to_test = self.emit(Instr::Jump { to: 0 }, *for_pos)?;
                let top = self.here();
                match direct {
                    Some(r) => self.bound[r as usize] = true,
                    None => self.assign_from(vars, dst, *for_pos)?,
                }
                self.comprehension(rest, acc, body)?;
                self.patch(to_test);
                self.emit(
                    Instr::ForNext {
                        iter: it,
                        dst,
                        body: top,
                    },
                    *for_pos,
                )?;
                self.emit(Instr::IterEnd { iter: it }, *for_pos)?;
                self.next_reg = mark;
            }
        }
        self.bound = before;
        Ok(())
    }

    fn call(
        &mut self,
        func: &'h Expr<'h>,
        args: &'h [Arg<'h>],
        lparen: Pos,
        dst: Reg,
    ) -> Result<()> {
        // Arguments are laid out positional, named, `*args`, `**kwargs`.
        let (mut npos, mut nnamed) = (0, 0);
        let mut star = None;
        let mut star_star = None;
        for a in args {
            match a {
                Arg::Positional(_) => npos += 1,
                Arg::Named { .. } => nnamed += 1,
                Arg::Star { value, .. } => star = Some(value),
                Arg::StarStar { value, .. } => star_star = Some(value),
            }
        }
        let nargs = npos + nnamed + star.is_some() as usize + star_star.is_some() as usize;
        if nargs + 1 > MAX_OPERAND || self.sites.len() > MAX_OPERAND {
            return Err(too_large(lparen));
        }
        let base = self.temps(1 + nargs, lparen)?;
        let mut attr_pos = lparen;
        let mut recv = base;
        let method = match &func.kind {
            ExprKind::Dot { x, name, dot } => {
                // A receiver that is a local is read where it is (no
                // argument can assign a local of this function); any other
                // goes in the call's base.
                match &unparen(x).kind {
                    ExprKind::Ident(id) if matches!(id.binding.get(), Binding::Local(_)) => {
                        recv = self.operand_reg(x)?;
                    }
                    _ => self.expr_to(x, base)?,
                }
                attr_pos = *dot;
                Some(name.name)
            }
            _ => {
                self.expr_to(func, base)?;
                None
            }
        };
        let args_from = self.instrs.len() as u32;
        let mut r = base + 1;
        let mut operands = BumpVec::new_in(self.env.heap.bump);
        for a in args {
            if let Arg::Positional(e) = a {
                self.arg_to(e, r, &mut operands)?;
                r += 1;
            }
        }
        let mut names = BumpVec::with_capacity_in(nnamed, self.env.heap.bump);
        for a in args {
            if let Arg::Named { name, value } = a {
                self.arg_to(value, r, &mut operands)?;
                names.push(name.name);
                r += 1;
            }
        }
        if let Some(e) = star {
            self.expr_to(e, r)?;
            r += 1;
        }
        if let Some(e) = star_star {
            self.expr_to(e, r)?;
        }
        let plain = names.is_empty() && star.is_none() && star_star.is_none();
        let site = CallSite {
            npos: npos as u16,
            names: names.into_bump_slice(),
            star: star.is_some(),
            star_star: star_star.is_some(),
            plain,
            in_place: match method {
                Some("append") if plain && npos == 1 => InPlace::Append,
                Some("get") if plain && (npos == 1 || npos == 2) => InPlace::Get,
                Some("setdefault") if plain && (npos == 1 || npos == 2) => InPlace::SetDefault,
                Some(m) if plain => match (m, npos) {
                    ("startswith", 1) => InPlace::StartsWith,
                    ("endswith", 1) => InPlace::EndsWith,
                    ("strip", 0) => InPlace::Strip,
                    ("lstrip", 0) => InPlace::LStrip,
                    ("rstrip", 0) => InPlace::RStrip,
                    ("lower", 0) => InPlace::Lower,
                    ("upper", 0) => InPlace::Upper,
                    ("split", 1) => InPlace::Split,
                    ("replace", 2) => InPlace::Replace,
                    _ => InPlace::No,
                },
                _ => InPlace::No,
            },
            method: method.unwrap_or(""),
            attr_pos,
            cache: Cell::new((u64::MAX, None)),
            args: args_from,
            call: self.instrs.len() as u32,
            recv,
            operands: operands.into_bump_slice(),
        };
        self.sites.push(site);
        let site = (self.sites.len() - 1) as u16;
        let i = match method {
            Some(_) => Instr::CallMethod { dst, base, site },
            None => Instr::Call { dst, base, site },
        };
        self.emit(i, lparen)?;
        Ok(())
    }

    /// Puts argument `e` in register `r` of a call: a constant or a local
    /// becomes an operand the call copies itself (see
    /// [`CallSite::operands`]; an unbound local is still checked here),
    /// anything else is evaluated into `r`.
    fn arg_to(
        &mut self,
        e: &'h Expr<'h>,
        r: Reg,
        operands: &mut BumpVec<'h, (Reg, Rk)>,
    ) -> Result<()> {
        if let Some(k) = self.const_of(e)? {
            operands.push((r, RK_CONST | k));
            return Ok(());
        }
        if let ExprKind::Ident(id) = &unparen(e).kind {
            if let Binding::Local(i) = id.binding.get() {
                self.check_bound(i, id)?;
                operands.push((r, i as Reg));
                return Ok(());
            }
        }
        self.expr_to(e, r)
    }

    /// Compiles a nested `def` or `lambda` and creates its value in `dst`.
    fn function(&mut self, func: &'h Function<'h>, dst: Reg) -> Result<()> {
        let scope = func
            .scope
            .get()
            .ok_or_else(|| Error::msg("internal error: function not resolved"))?;
        // Parameters in slot order: positional, keyword-only, *args, **kwargs.
        // (Lists in the arena: most functions have a few parameters, and a
        // heap allocation costs more than the list's whole life there.)
        let bump = self.env.heap.bump;
        let nparams = func.params.len();
        let mut positional = BumpVec::with_capacity_in(nparams, bump);
        let mut kwonly = BumpVec::new_in(bump);
        let mut args = None;
        let mut kwargs = None;
        let mut after_star = false;
        for p in func.params {
            match &p.kind {
                ParamKind::Required(id) => {
                    let dest = if after_star {
                        &mut kwonly
                    } else {
                        &mut positional
                    };
                    dest.push((id, None));
                }
                ParamKind::Optional(id, d) => {
                    let dest = if after_star {
                        &mut kwonly
                    } else {
                        &mut positional
                    };
                    dest.push((id, Some(d)));
                }
                ParamKind::Star => after_star = true,
                ParamKind::Args(id) => {
                    after_star = true;
                    args = Some(id);
                }
                ParamKind::Kwargs(id) => kwargs = Some(id),
            }
        }
        let ordinary = || positional.iter().chain(kwonly.iter());
        let ndefaults = ordinary().filter(|(_, d)| d.is_some()).count();
        if ndefaults > MAX_OPERAND || self.functions.len() > MAX_OPERAND {
            return Err(too_large(func.pos));
        }
        let base = self.temps(ndefaults, func.pos)?;
        let mut k = 0;
        for (_, d) in ordinary() {
            if let Some(d) = d {
                self.expr_to(d, base + k)?;
                k += 1;
            }
        }
        let slot = |id: &Ident<'_>| -> Reg {
            match id.binding.get() {
                Binding::Local(i) | Binding::Cell(i) => i as Reg,
                _ => 0,
            }
        };
        let mut names = BumpVec::with_capacity_in(nparams, bump);
        let mut regs = BumpVec::with_capacity_in(nparams, bump);
        let mut has_default = BumpVec::with_capacity_in(nparams, bump);
        for (id, d) in ordinary() {
            names.push(id.name);
            regs.push(slot(id));
            has_default.push(d.is_some());
        }
        for id in [args, kwargs].into_iter().flatten() {
            names.push(id.name);
            regs.push(slot(id));
        }
        let params = Params {
            names: names.into_bump_slice(),
            npositional: positional.len() as u16,
            nkwonly: kwonly.len() as u16,
            has_args: args.is_some(),
            has_kwargs: kwargs.is_some(),
            has_default: has_default.into_bump_slice(),
            regs: regs.into_bump_slice(),
        };
        let mut inner = FnCompiler::new(self.env, scope, func.name, func.pos)?;
        for r in params.regs {
            if let Some(b) = inner.bound.get_mut(*r as usize) {
                *b = true;
            }
        }
        inner.stmts(func.body)?;
        inner.emit(Instr::Return { src: RK_CONST }, func.pos)?;
        let entry_pos = first_ident_pos(func.body).unwrap_or(func.pos);
        let code = inner.finish(params, entry_pos)?;
        self.functions.push(code);
        self.emit(
            Instr::MakeFunction {
                dst,
                func: (self.functions.len() - 1) as u16,
                base,
            },
            func.pos,
        )?;
        Ok(())
    }
}

/// The position starlark-go gives the first instruction of a function's
/// body, where errors of entering the function are reported (`None`: the
/// `def`'s). starlark-go records a position when it loads a name that is not
/// universal, before an operator, index or call that can fail, and before a
/// slice or a function (whose defaults can fail); an instruction takes the
/// latest one recorded. So it is the position of the first such point
/// reached before the first instruction is emitted: a literal, a universal
/// name (`len`, `True`), or a dict display or comprehension (whose empty
/// container comes first) leave the `def`'s. `pass` emits nothing.
fn first_ident_pos(body: &[&Stmt<'_>]) -> Option<Pos> {
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

fn first_leaf(e: &Expr<'_>) -> Option<Pos> {
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
fn last_pos(e: &Expr<'_>) -> Option<Pos> {
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
fn main_path<'a, 'h>(e: &'a Expr<'h>, later: &mut Vec<&'a Expr<'h>>) -> Option<Pos> {
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
fn deferred_pos(mut later: Vec<&Expr<'_>>) -> Option<Pos> {
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
fn test_layout(cond: &Expr<'_>) -> (bool, Option<Pos>) {
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
fn clauses_pos(clauses: &[Clause<'_>]) -> Option<Pos> {
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
fn plus_runs<'a, 'h>(e: &'a Expr<'h>) -> Vec<(Vec<&'a Expr<'h>>, Option<Pos>)> {
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
fn run_items<'a, 'h>(run: &[&'a Expr<'h>]) -> Vec<&'a Expr<'h>> {
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
fn plus_pos(e: &Expr<'_>) -> Option<Pos> {
    let runs = plus_runs(e);
    match runs.as_slice() {
        [(only, _)] => run_items(only).iter().rev().find_map(|x| last_pos(x)),
        [.., (_, pos)] => *pos,
        [] => None,
    }
}

/// [`first_leaf`] of a chain of `+`: its first joined summand's.
fn plus_first_leaf(e: &Expr<'_>) -> Option<Pos> {
    let runs = plus_runs(e);
    let (first, _) = runs.first()?;
    match first.as_slice() {
        [only] => first_leaf(only),
        _ => run_items(first).first().and_then(|x| first_leaf(x)),
    }
}

fn unparen<'a, 'h>(e: &'a Expr<'h>) -> &'a Expr<'h> {
    match &e.kind {
        ExprKind::Paren(x) => unparen(x),
        _ => e,
    }
}

/// Whether `e` may be evaluated straight into `slot`, the register of the
/// plain local it is assigned to: true unless some part of `e` would write
/// the register before a later part reads the variable's old value.
///
/// Most forms evaluate every operand into other registers and then write
/// their destination with one instruction, after all reads (`x = x + 1` is
/// one `add`). The exceptions are the forms that build or choose their
/// value in the destination itself: a dict display and a comprehension make
/// an empty container there before evaluating what goes into it, so they
/// must not read the variable; `and`/`or` put their left operand there
/// before evaluating the right one, which may then read the variable only
/// if the left operand is the variable itself; a conditional expression
/// evaluates its condition first and then one branch into the destination,
/// so it is as safe as its branches. (An early write that nothing reads is
/// unobservable: a runtime error ends the program.)
fn evaluates_into(e: &Expr<'_>, slot: Reg) -> bool {
    match &e.kind {
        ExprKind::Paren(x) => evaluates_into(x, slot),
        ExprKind::Dict(_) | ExprKind::ListComp { .. } | ExprKind::DictComp { .. } => {
            !reads_local(e, slot)
        }
        ExprKind::Cond { then, els, .. } => evaluates_into(then, slot) && evaluates_into(els, slot),
        ExprKind::Binary {
            op: BinOp::And | BinOp::Or,
            l,
            r,
            ..
        } => {
            // After `l` the register holds `l`'s value, which is the old
            // value only when `l` is the variable itself.
            evaluates_into(l, slot)
                && if is_local(l, slot) {
                    evaluates_into(r, slot)
                } else {
                    !reads_local(r, slot)
                }
        }
        _ => true,
    }
}

/// Whether `e` is the plain local in register `slot` (in parentheses or not).
fn is_local(e: &Expr<'_>, slot: Reg) -> bool {
    match &unparen(e).kind {
        ExprKind::Ident(id) => id.binding.get() == Binding::Local(u32::from(slot)),
        _ => false,
    }
}

/// Whether evaluating `e` reads the plain local in register `slot`. The
/// bodies of nested functions are not part of the evaluation (and a name
/// they share with this function is a cell, not a plain local); their
/// defaults are. Comprehension variables have slots of their own, so a
/// comprehension that rebinds the name does not read it.
fn reads_local(e: &Expr<'_>, slot: Reg) -> bool {
    let reads = |x: &Expr<'_>| reads_local(x, slot);
    let reads_opt = |x: &Option<&Expr<'_>>| x.is_some_and(|x| reads_local(x, slot));
    let reads_clauses = |clauses: &[Clause<'_>]| {
        clauses.iter().any(|c| match c {
            Clause::For { vars, iter, .. } => reads(vars) || reads(iter),
            Clause::If { cond, .. } => reads(cond),
        })
    };
    match &e.kind {
        ExprKind::Ident(_) => is_local(e, slot),
        ExprKind::Literal(_) => false,
        ExprKind::Paren(x) | ExprKind::Unary { x, .. } | ExprKind::Dot { x, .. } => reads(x),
        ExprKind::List(items) | ExprKind::Tuple(items) => items.iter().any(|x| reads(x)),
        ExprKind::Dict(entries) => entries.iter().any(|en| reads(en.key) || reads(en.value)),
        ExprKind::ListComp { body, clauses } => reads(body) || reads_clauses(clauses),
        ExprKind::DictComp {
            key,
            value,
            clauses,
            ..
        } => reads(key) || reads(value) || reads_clauses(clauses),
        ExprKind::Cond {
            then, cond, els, ..
        } => reads(then) || reads(cond) || reads(els),
        ExprKind::Lambda(func) => func.params.iter().any(|p| match &p.kind {
            ParamKind::Optional(_, d) => reads(d),
            _ => false,
        }),
        ExprKind::Call { func, args, .. } => {
            reads(func)
                || args.iter().any(|a| match a {
                    Arg::Positional(x)
                    | Arg::Named { value: x, .. }
                    | Arg::Star { value: x, .. }
                    | Arg::StarStar { value: x, .. } => reads(x),
                })
        }
        ExprKind::Index { x, index, .. } => reads(x) || reads(index),
        ExprKind::Slice {
            x, lo, hi, step, ..
        } => reads(x) || reads_opt(lo) || reads_opt(hi) || reads_opt(step),
        ExprKind::Binary { l, r, .. } => reads(l) || reads(r),
    }
}

fn binary_instr(op: BinOp, dst: Reg, a: Rk, b: Rk, inplace: bool) -> Instr {
    match op {
        BinOp::Add if inplace => Instr::InplaceAdd { dst, a, b },
        BinOp::BitOr if inplace => Instr::InplaceOr { dst, a, b },
        BinOp::Add => Instr::Add { dst, a, b },
        BinOp::Sub => Instr::Sub { dst, a, b },
        BinOp::Mul => Instr::Mul { dst, a, b },
        BinOp::Div => Instr::Div { dst, a, b },
        BinOp::FloorDiv => Instr::FloorDiv { dst, a, b },
        BinOp::Mod => Instr::Mod { dst, a, b },
        BinOp::BitAnd => Instr::BitAnd { dst, a, b },
        BinOp::BitOr => Instr::BitOr { dst, a, b },
        BinOp::BitXor => Instr::BitXor { dst, a, b },
        BinOp::Shl => Instr::Shl { dst, a, b },
        BinOp::Shr => Instr::Shr { dst, a, b },
        BinOp::In => Instr::In { dst, a, b },
        BinOp::NotIn => Instr::NotIn { dst, a, b },
        BinOp::Eq => Instr::Eq { dst, a, b },
        BinOp::Ne => Instr::Ne { dst, a, b },
        BinOp::Lt => Instr::Lt { dst, a, b },
        BinOp::Le => Instr::Le { dst, a, b },
        BinOp::Gt => Instr::Gt { dst, a, b },
        BinOp::Ge => Instr::Ge { dst, a, b },
        // `and`/`or` are compiled with jumps and never reach here.
        BinOp::And | BinOp::Or => Instr::Eq { dst, a, b },
    }
}
