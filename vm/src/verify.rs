//! The bytecode verifier: proves, once per compiled function, the facts the
//! interpreter relies on to access registers, constants and instructions
//! without bounds checks.
//!
//! For every instruction of a [`Code`]: each register operand (including
//! every register of a consecutive range such as call arguments) is below
//! `nregs`; each constant operand and constant index is below
//! `consts.len()`; call sites and nested functions exist; jump targets are
//! inside the code; and the last instruction is an unconditional `Return`
//! or `Jump`, so the program counter can never run past the end. Parameter
//! and cell slots are checked too, the arity of the quickest call path
//! ([`Code::fast_arity`]), and the free-variable sources of nested
//! functions against the enclosing frame. A failure is a compiler bug and
//! surfaces as an internal error instead of undefined behaviour.

use crate::error::{Error, Result};
use crate::opcode::*;
use crate::value::Value;

/// Verifies `code` and every function nested in it.
pub fn verify(code: &Code<'_>) -> Result<()> {
    let mut stack = vec![code];
    while let Some(c) = stack.pop() {
        verify_one(c)?;
        stack.extend(c.functions.iter().copied());
    }
    Ok(())
}

fn bad(code: &Code<'_>, pc: usize, what: &str) -> Error {
    Error::msg(format!(
        "internal error: invalid bytecode in {} at {pc}: {what}",
        code.name
    ))
}

fn verify_one(code: &Code<'_>) -> Result<()> {
    let nregs = code.nregs as usize;
    let nconsts = code.consts.len();
    let ninstrs = code.instrs.len();
    if code.positions.len() != ninstrs {
        return Err(bad(code, 0, "positions do not match instructions"));
    }
    match code.instrs.last() {
        Some(Instr::Return { .. } | Instr::Jump { .. }) => {}
        _ => return Err(bad(code, ninstrs, "code does not end in return or jump")),
    }
    let reg = |pc: usize, r: Reg| -> Result<()> {
        if (r as usize) < nregs {
            Ok(())
        } else {
            Err(bad(code, pc, "register out of range"))
        }
    };
    let range = |pc: usize, base: Reg, n: usize| -> Result<()> {
        if base as usize + n <= nregs {
            Ok(())
        } else {
            Err(bad(code, pc, "register range out of range"))
        }
    };
    let konst = |pc: usize, k: u16| -> Result<()> {
        if (k as usize) < nconsts {
            Ok(())
        } else {
            Err(bad(code, pc, "constant out of range"))
        }
    };
    let rk = |pc: usize, op: Rk| -> Result<()> {
        if op & RK_CONST != 0 {
            konst(pc, op & !RK_CONST)
        } else {
            reg(pc, op)
        }
    };
    let target = |pc: usize, to: u32| -> Result<()> {
        if (to as usize) < ninstrs {
            Ok(())
        } else {
            Err(bad(code, pc, "jump out of range"))
        }
    };
    let hint_cell = |pc: usize, h: u16| -> Result<()> {
        if (h as usize) < code.hints.len() {
            Ok(())
        } else {
            Err(bad(code, pc, "index hint out of range"))
        }
    };
    let site = |pc: usize, s: u16| -> Result<&CallSite<'_>> {
        code.sites
            .get(s as usize)
            .ok_or_else(|| bad(code, pc, "call site out of range"))
    };
    for (pc, i) in code.instrs.iter().enumerate() {
        use Instr::*;
        match *i {
            Move { dst, src } => {
                reg(pc, dst)?;
                reg(pc, src)?;
            }
            Const { dst, k } => {
                reg(pc, dst)?;
                konst(pc, k)?;
            }
            CheckBound { reg: r, name } => {
                reg(pc, r)?;
                konst(pc, name)?;
            }
            LoadGlobal { dst, .. } => reg(pc, dst)?,
            StoreGlobal { src, .. } => reg(pc, src)?,
            LoadCell { dst, slot } => {
                reg(pc, dst)?;
                reg(pc, slot)?;
            }
            StoreCell { slot, src } => {
                reg(pc, slot)?;
                reg(pc, src)?;
            }
            LoadFree { dst, idx } => {
                reg(pc, dst)?;
                if idx as usize >= code.freevars.len() {
                    return Err(bad(code, pc, "free variable out of range"));
                }
            }
            Add { dst, a, b }
            | Sub { dst, a, b }
            | Mul { dst, a, b }
            | Div { dst, a, b }
            | FloorDiv { dst, a, b }
            | Mod { dst, a, b }
            | BitAnd { dst, a, b }
            | BitOr { dst, a, b }
            | BitXor { dst, a, b }
            | Shl { dst, a, b }
            | Shr { dst, a, b }
            | In { dst, a, b }
            | NotIn { dst, a, b }
            | Eq { dst, a, b }
            | Ne { dst, a, b }
            | Lt { dst, a, b }
            | Le { dst, a, b }
            | Gt { dst, a, b }
            | Ge { dst, a, b }
            | InplaceAdd { dst, a, b }
            | InplaceOr { dst, a, b } => {
                reg(pc, dst)?;
                rk(pc, a)?;
                rk(pc, b)?;
            }
            AddI { dst, a, .. }
            | SubI { dst, a, .. }
            | MulI { dst, a, .. }
            | ModI { dst, a, .. }
            | InplaceAddI { dst, a, .. }
            | EqI { dst, a, .. }
            | NeI { dst, a, .. }
            | LtI { dst, a, .. }
            | LeI { dst, a, .. }
            | GtI { dst, a, .. }
            | GeI { dst, a, .. } => {
                reg(pc, dst)?;
                reg(pc, a)?;
            }
            Neg { dst, src } | Plus { dst, src } | Invert { dst, src } | Not { dst, src } => {
                reg(pc, dst)?;
                reg(pc, src)?;
            }
            Jump { to } => target(pc, to)?,
            JumpIfFalse { cond, to } | JumpIfTrue { cond, to } => {
                reg(pc, cond)?;
                target(pc, to)?;
            }
            IterStart { dst, src, fill } => {
                range(pc, dst, ITER_REGS)?;
                reg(pc, src)?;
                if fill != NO_FILL {
                    reg(pc, fill)?;
                }
            }
            ForNext { iter, dst, body } => {
                range(pc, iter, ITER_REGS)?;
                reg(pc, dst)?;
                target(pc, body)?;
            }
            IterEnd { iter } => range(pc, iter, ITER_REGS)?,
            Call { dst, base, site: s } | CallMethod { dst, base, site: s } => {
                reg(pc, dst)?;
                let s = site(pc, s)?;
                range(pc, base, 1 + s.nargs())?;
                reg(pc, s.recv)?;
                for &(r, op) in s.operands {
                    // An argument register of this call, from a valid
                    // operand.
                    if r <= base || r as usize > base as usize + s.nargs() {
                        return Err(bad(code, pc, "call operand outside the arguments"));
                    }
                    rk(pc, op)?;
                }
            }
            GetAttr { dst, x, name } => {
                reg(pc, dst)?;
                reg(pc, x)?;
                konst(pc, name)?;
            }
            SetAttr { x, name, src } => {
                reg(pc, x)?;
                konst(pc, name)?;
                reg(pc, src)?;
            }
            Index { dst, x, i, hint } => {
                reg(pc, dst)?;
                reg(pc, x)?;
                rk(pc, i)?;
                hint_cell(pc, hint)?;
            }
            SetIndex { x, i, src, hint } => {
                reg(pc, x)?;
                rk(pc, i)?;
                reg(pc, src)?;
                hint_cell(pc, hint)?;
            }
            Percent { dst, t, src } => {
                reg(pc, dst)?;
                let Some(t) = code.templates.get(t as usize) else {
                    return Err(bad(code, pc, "template out of range"));
                };
                range(pc, src, t.nargs())?;
            }
            Slice { dst, base } => {
                reg(pc, dst)?;
                range(pc, base, 4)?;
            }
            MakeList { dst, base, n } | MakeTuple { dst, base, n } => {
                reg(pc, dst)?;
                range(pc, base, n as usize)?;
            }
            MakeDict { dst, .. } => reg(pc, dst)?,
            ListOf { dst, k } => {
                reg(pc, dst)?;
                konst(pc, k)?;
                if !matches!(code.consts[k as usize], Value::Tuple(_)) {
                    return Err(bad(code, pc, "list items not a constant tuple"));
                }
            }
            MakeRecord { dst, rec } => {
                reg(pc, dst)?;
                let Some(rec) = code.records.get(rec as usize) else {
                    return Err(bad(code, pc, "record out of range"));
                };
                if rec.keys.is_empty()
                    || rec.keys.len() > RECORD_KEYS
                    || rec.srcs.len() != rec.keys.len()
                    || rec.hashes.len() != rec.keys.len()
                    || !rec.keys.iter().all(|k| matches!(k, Value::Str(_)))
                {
                    return Err(bad(code, pc, "record not 1 to 8 string keys"));
                }
                for &src in rec.srcs {
                    reg(pc, src)?;
                }
            }
            DictSetUnique { dict, key, src } | DictSet { dict, key, src } => {
                reg(pc, dict)?;
                reg(pc, key)?;
                reg(pc, src)?;
            }
            DictPushNew { dict, k, src } => {
                reg(pc, dict)?;
                konst(pc, k)?;
                reg(pc, src)?;
            }
            ListAppend { list, src } => {
                reg(pc, list)?;
                reg(pc, src)?;
            }
            MakeFunction { dst, func, base } => {
                reg(pc, dst)?;
                let f = code
                    .functions
                    .get(func as usize)
                    .ok_or_else(|| bad(code, pc, "function out of range"))?;
                range(pc, base, f.params.ndefaults())?;
                for (_, src) in f.freevars {
                    match *src {
                        FreeSource::Local(r) => reg(pc, r)?,
                        FreeSource::Free(i) => {
                            if i as usize >= code.freevars.len() {
                                return Err(bad(code, pc, "free variable source out of range"));
                            }
                        }
                    }
                }
            }
            Load => {}
            Unpack { base, src, n } => {
                reg(pc, src)?;
                range(pc, base, n as usize)?;
            }
            Return { src } => rk(pc, src)?,
        }
    }
    for &r in code.params.regs.iter().chain(code.cells) {
        reg(0, r)?;
    }
    if code.fast_arity != NO_FAST_ARITY
        && (code.fast_arity != code.params.fast_arity(code.cells)
            || code.fast_arity as usize > nregs)
    {
        return Err(bad(code, 0, "fast call arity inconsistent"));
    }
    if code.params.regs.len() != code.params.nslots()
        || code.params.has_default.len()
            != code.params.npositional as usize + code.params.nkwonly as usize
    {
        return Err(bad(code, 0, "parameters inconsistent"));
    }
    Ok(())
}
