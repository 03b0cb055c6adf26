//! Nested functions: a `def` or `lambda` compiled by a compiler of its
//! own, its parameters laid out in slot order, and the instruction that
//! makes its value from the defaults and free variables at run time.

use super::position::first_ident_pos;
use super::{too_large, FnCompiler};
use crate::error::{Error, Result};
use crate::opcode::*;
use bumpalo::collections::Vec as BumpVec;
use codemode_lang::ast::*;

impl<'h> FnCompiler<'h, '_> {
    /// Compiles a nested `def` or `lambda` and creates its value in `dst`.
    pub(super) fn function(&mut self, func: &'h Function<'h>, dst: Reg) -> Result<()> {
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
