//! Whether an assignment's value may be evaluated straight into the
//! register of the local it is assigned to, which saves a move through a
//! temporary: not when part of the value would be built in that register
//! before another part reads the variable's old value (`x = {"k": x}`).

use super::position::unparen;
use crate::opcode::Reg;
use codemode_lang::ast::*;

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
pub(super) fn evaluates_into(e: &Expr<'_>, slot: Reg) -> bool {
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
pub(super) fn is_local(e: &Expr<'_>, slot: Reg) -> bool {
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
pub(super) fn reads_local(e: &Expr<'_>, slot: Reg) -> bool {
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
