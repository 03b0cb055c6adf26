//! Statements: one method per kind of statement, and assignments (to a
//! local's register straight when the value cannot overwrite it before it
//! is read, see the `in_place` module), augmented assignments and stores
//! to every kind of variable.

use super::in_place::evaluates_into;
use super::{binary_instr, too_large, FnCompiler, LoopCtx};
use crate::error::{Error, Result};
use crate::opcode::*;
use codemode_lang::ast::*;

impl<'h> FnCompiler<'h, '_> {
    pub(super) fn stmts(&mut self, stmts: &'h [&'h Stmt<'h>]) -> Result<()> {
        for s in stmts {
            let mark = self.next_reg;
            self.stmt(s)?;
            self.next_reg = mark;
        }
        Ok(())
    }

    pub(super) fn stmt(&mut self, s: &'h Stmt<'h>) -> Result<()> {
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
                self.emit(
                    Instr::IterStart {
                        dst: it,
                        src,
                        fill: NO_FILL,
                    },
                    pos,
                )?;
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
    pub(super) fn plain_local(&self, e: &Expr<'h>) -> Option<Reg> {
        match &e.kind {
            ExprKind::Ident(id) => match id.binding.get() {
                Binding::Local(i) => Some(i as Reg),
                _ => None,
            },
            ExprKind::Paren(x) => self.plain_local(x),
            _ => None,
        }
    }

    pub(super) fn assign(
        &mut self,
        lhs: &'h Expr<'h>,
        rhs: &'h Expr<'h>,
        op_pos: Pos,
    ) -> Result<()> {
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
    pub(super) fn assign_from(&mut self, lhs: &'h Expr<'h>, v: Reg, pos: Pos) -> Result<()> {
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

    pub(super) fn aug_assign(
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
    pub(super) fn store_var(&mut self, id: &'h Ident<'h>, v: Reg, pos: Pos) -> Result<()> {
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
}
