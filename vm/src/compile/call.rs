//! Calls: the call sites a call expression compiles to, with its
//! arguments laid out in consecutive registers (a constant or local
//! argument left for the call to copy itself), method calls with their
//! receiver, and `*args`/`**kwargs`.

use super::position::unparen;
use super::{too_large, FnCompiler};
use crate::error::Result;
use crate::opcode::*;
use bumpalo::collections::Vec as BumpVec;
use codemode_lang::ast::*;
use std::cell::Cell;

impl<'h> FnCompiler<'h, '_> {
    pub(super) fn call(
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
    pub(super) fn arg_to(
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
}
