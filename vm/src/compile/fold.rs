//! Constant folding: which expressions the compiler makes constants of
//! rather than code — literals, negated number literals, universal and
//! predeclared names, int arithmetic on int literals that cannot fail
//! ([`folded_int`]), and tuples of up to [`CONST_ITEMS`] such constants.
//! What might fail or overflow is left to run, where its error is
//! reported.

use super::consts::ConstKey;
use super::FnCompiler;
use crate::error::Result;
use crate::value::Value;
use codemode_lang::ast::*;

/// The most items of a tuple or list display made of constants that is
/// one constant (see `FnCompiler::const_items`).
pub(super) const CONST_ITEMS: usize = 16;

/// Whether `FnCompiler::const_of` makes a constant of `e` (without making
/// it).
pub(super) fn is_constant(e: &Expr<'_>) -> bool {
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
pub(super) const FOLD_DEPTH: u32 = 8;

/// The value of `e` when it is int arithmetic (`+`, `-`, `*`, `//`, `%`,
/// unary `-`) on int literals whose every step gives an int of 64 bits
/// without error, as the interpreter would compute it; `None` for anything
/// else, which is then evaluated when it runs (so a division by zero or an
/// overflow into a big int still happens there, and is reported there).
pub(super) fn folded_int(e: &Expr<'_>, depth: u32) -> Option<i64> {
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
pub(super) fn is_constant_items(items: &[&Expr<'_>]) -> bool {
    (1..=CONST_ITEMS).contains(&items.len()) && items.iter().all(|x| is_constant(x))
}

impl<'h> FnCompiler<'h, '_> {
    /// The constant `e` denotes, if it is a literal, a negated number
    /// literal, or a universal or predeclared name.
    pub(super) fn const_of(&mut self, e: &'h Expr<'h>) -> Result<Option<u16>> {
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
    pub(super) fn folded_const(&mut self, e: &'h Expr<'h>) -> Result<Option<u16>> {
        match folded_int(e, FOLD_DEPTH) {
            Some(i) => self.konst(ConstKey::Int(i), Value::Int(i)).map(Some),
            None => Ok(None),
        }
    }

    /// A constant tuple of `items` when there are 1 to [`CONST_ITEMS`] and
    /// every one is a constant (a tuple display that is a constant, and
    /// the items of a list display made by [`Instr::ListOf`]).
    pub(super) fn const_items(&mut self, items: &'h [&'h Expr<'h>]) -> Result<Option<u16>> {
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
}
