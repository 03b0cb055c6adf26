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
//!
//! This module holds the compiler's state, its emission helpers and
//! expressions; statements (`stmt`), calls (`call`), nested functions
//! (`function`), the constant table (`consts`) and constant folding
//! (`fold`) have modules of their own, as have the two analyses of the
//! syntax tree the compiler consults: the error positions starlark-go
//! reports (`position`) and whether an assignment may build its value in
//! the local's own register (`in_place`).

use crate::error::{Error, Result};
use crate::heap::Heap;
use crate::opcode::*;
use crate::template::Template;
use crate::value::Value;
use bumpalo::collections::Vec as BumpVec;
use codemode_lang::ast::*;
use rustc_hash::FxHashMap;
use std::cell::{Cell, RefCell};

mod call;
mod consts;
mod fold;
mod function;
mod in_place;
mod position;
mod stmt;

use consts::{ConstIndex, ConstKey};
use position::{last_pos, unparen};

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
            instrs: BumpVec::with_capacity_in(16, bump),
            positions: BumpVec::with_capacity_in(16, bump),
            consts: BumpVec::with_capacity_in(4, bump),
            const_index: ConstIndex {
                list: BumpVec::new_in(bump),
                table: FxHashMap::default(),
            },
            sites: BumpVec::new_in(bump),
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

    // ---- expressions ------------------------------------------------------

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
                // With one `for` and no `if`, the list gets an element per
                // iteration: its loop gives it room for all at once.
                let fill = match clauses {
                    [Clause::For { .. }] => dst,
                    _ => NO_FILL,
                };
                self.comprehension(clauses, dst, fill, &|c, acc| {
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
                self.comprehension(clauses, dst, NO_FILL, &|c, acc| {
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
    /// one element to the accumulator in register `acc`; `fill` is the
    /// first loop's (see [`Instr::IterStart`]).
    fn comprehension(
        &mut self,
        clauses: &'h [Clause<'h>],
        acc: Reg,
        fill: Reg,
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
                self.comprehension(rest, acc, NO_FILL, body)?;
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
                self.emit(Instr::IterStart { dst: it, src, fill }, *for_pos)?;
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
                self.comprehension(rest, acc, NO_FILL, body)?;
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
