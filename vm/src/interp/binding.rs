//! Argument binding: how the arguments of a call of a Starlark function
//! reach its parameters. The common call (as many plain positional
//! arguments as the function has plain parameters) is a copy into the new
//! frame's registers; every other call is bound as starlark-go's `setArgs`
//! binds it (defaults, keyword arguments, `*args` and `**kwargs`
//! collected, the errors of a missing, unexpected or repeated argument
//! reported at the callee's first instruction). A call site's arguments
//! are collected from its registers first, with `*args` and `**kwargs`
//! expanded ([`Thread::collect_args`]).

use super::{calls, Thread, MAX_FRAMES, STACK_SLACK};
use crate::budget::ITEM_UNITS;
use crate::error::{Error, Result};
use crate::opcode::*;
use crate::value::*;

impl<'h> Thread<'h> {
    /// Prepares a call of a Starlark function: checks recursion, binds the
    /// arguments into a new frame at `base`, and pushes it.
    pub(super) fn push_call(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        ret: Reg,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<()> {
        let code = func.code;
        if code.active.get() {
            return Err(calls::recursion(code));
        }
        self.stack.truncate(base);
        self.stack
            .resize(base + code.nregs as usize, Value::Unbound);
        // starlark-go reports binding errors inside the callee, at its
        // first instruction.
        self.bind_args(func, base, positional, named)
            .map_err(|e| e.at(code.entry_pos))?;
        self.enter(code, Some(func), base, ret)
    }

    /// The common call: exactly as many positional arguments as the
    /// function has parameters, all plain (no defaults needed, no `*args`,
    /// `**kwargs` or keyword-only ones). The arguments are copied straight
    /// from the caller's registers `arg_start..arg_start + n` into the new
    /// frame at `base`. Returns `false`, having done nothing, when the call
    /// needs the general binding.
    #[inline]
    pub(super) fn push_call_simple(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        ret: Reg,
        arg_start: usize,
        n: usize,
    ) -> Result<bool> {
        let code = func.code;
        let p = &code.params;
        if p.has_args || p.has_kwargs || p.nkwonly != 0 || p.npositional as usize != n {
            return Ok(false);
        }
        if code.active.get() {
            return Err(calls::recursion(code));
        }
        // The stack only grows here (in steps, so that this is rare); the
        // callee's registers are reset in place. The arguments sit in the
        // caller's registers, below `base`.
        let nregs = code.nregs as usize;
        if self.stack.len() < base + nregs {
            self.stack
                .resize(base + nregs + STACK_SLACK, Value::Unbound);
        }
        let (caller, callee) = self.stack.split_at_mut(base);
        let regs = &mut callee[..nregs];
        regs.fill(Value::Unbound);
        for (&r, &v) in p.regs.iter().zip(&caller[arg_start..arg_start + n]) {
            regs[r as usize] = v;
        }
        self.enter(code, Some(func), base, ret)?;
        Ok(true)
    }

    /// [`Thread::push_call_simple`] for arguments outside the stack (calls
    /// from builtins such as `sorted(key=...)`).
    pub(super) fn push_call_positional(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        positional: &[Value<'h>],
    ) -> Result<bool> {
        let code = func.code;
        let n = positional.len();
        if code.fast_arity as usize == n && !code.active.get() && self.frames.len() < MAX_FRAMES {
            // As `push_fast_frame` enters it: the arguments in the first
            // registers, the other locals reset (the compiler writes every
            // temporary before reading it), no cells to make.
            let nregs = code.nregs as usize;
            if self.stack.len() < base + nregs {
                self.stack.resize(base + nregs, Value::Unbound);
            }
            self.stack[base..base + n].copy_from_slice(positional);
            // SAFETY: the stack holds the callee's registers (made so
            // above), and `n` is its fast arity.
            unsafe { self.enter_fast_frame(func, n, base, 0) };
            return Ok(true);
        }
        let p = &code.params;
        if p.has_args
            || p.has_kwargs
            || p.nkwonly != 0
            || p.npositional as usize != positional.len()
        {
            return Ok(false);
        }
        if code.active.get() {
            return Err(calls::recursion(code));
        }
        self.stack.truncate(base);
        self.stack
            .resize(base + code.nregs as usize, Value::Unbound);
        for (&r, &v) in p.regs.iter().zip(positional) {
            self.stack[base + r as usize] = v;
        }
        self.enter(code, Some(func), base, 0)?;
        Ok(true)
    }

    /// Binds arguments to parameters as starlark-go's `setArgs` does.
    pub(super) fn bind_args(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<()> {
        let code = func.code;
        let p = &code.params;
        let name = code.name;
        let nslots = p.nslots();
        if nslots == 0 {
            let n = positional.len() + named.len();
            if n > 0 {
                return Err(Error::msg(format!(
                    "function {name} accepts no arguments ({n} given)"
                )));
            }
            return Ok(());
        }
        let nordinary = p.npositional as usize + p.nkwonly as usize;
        let npos = p.npositional as usize;
        let mut kwdict = None;
        if p.has_kwargs {
            let d = self.heap.dict(0)?;
            let reg = p.regs[nslots - 1];
            self.stack[base + reg as usize] = Value::Dict(d);
            kwdict = Some(d);
        }
        let mut n = positional.len();
        if n > npos {
            if !p.has_args {
                let has_positional_default = p.has_default[..npos].iter().any(|d| *d);
                return Err(Error::msg(format!(
                    "function {name} accepts {}{npos} positional argument{} ({} given)",
                    if has_positional_default {
                        "at most "
                    } else {
                        ""
                    },
                    if npos == 1 { "" } else { "s" },
                    positional.len()
                )));
            }
            n = npos;
        }
        for (i, v) in positional[..n].iter().enumerate() {
            self.stack[base + p.regs[i] as usize] = *v;
        }
        if p.has_args {
            let t = self.heap.tuple(&positional[n..])?;
            self.stack[base + p.regs[nordinary] as usize] = t;
        }
        for (k, v) in named {
            match p.names[..nordinary].iter().position(|pn| pn == k) {
                Some(i) => {
                    let slot = base + p.regs[i] as usize;
                    if !matches!(self.stack[slot], Value::Unbound) {
                        return Err(Error::msg(format!(
                            "function {name} got multiple values for parameter {}",
                            quoted(k)
                        )));
                    }
                    self.stack[slot] = *v;
                }
                None => match kwdict {
                    None => {
                        return Err(Error::msg(format!(
                            "function {name} got an unexpected keyword argument {}",
                            quoted(k)
                        )))
                    }
                    Some(d) => {
                        let key = self.heap.str_in_arena(*k)?;
                        if !d.map.borrow_mut().insert(key, *v)? {
                            return Err(Error::msg(format!(
                                "function {name} got multiple values for parameter {}",
                                quoted(k)
                            )));
                        }
                    }
                },
            }
        }
        if n < nordinary {
            let mut missing: Vec<&str> = Vec::new();
            let mut d = p.has_default[..n].iter().filter(|x| **x).count();
            for i in n..nordinary {
                let slot = base + p.regs[i] as usize;
                let has_default = p.has_default[i];
                if matches!(self.stack[slot], Value::Unbound) {
                    if has_default {
                        self.stack[slot] = func.defaults[d];
                    } else {
                        missing.push(p.names[i]);
                    }
                }
                if has_default {
                    d += 1;
                }
            }
            if !missing.is_empty() {
                return Err(Error::msg(format!(
                    "function {name} missing {} argument{} ({})",
                    missing.len(),
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The value of `r[base + i]` for call arguments laid out by a site:
    /// collects positional and named arguments, expanding `*args` and
    /// `**kwargs`.
    pub(super) fn collect_args(
        &mut self,
        base: usize,
        site: &CallSite<'h>,
        positional: &mut Vec<Value<'h>>,
        named: &mut Vec<(&'h str, Value<'h>)>,
    ) -> Result<()> {
        let mut r = base + 1;
        positional.extend_from_slice(&self.stack[r..r + site.npos as usize]);
        r += site.npos as usize;
        for name in site.names {
            named.push((name, self.stack[r]));
            r += 1;
        }
        if site.star {
            let v = self.stack[r];
            r += 1;
            // The values spread are copied once more into the callee's
            // parameters: their number is charged as work (a million of
            // them take milliseconds, far more than a step).
            let budget = self.budget;
            match v {
                Value::List(l) => {
                    budget.in_blocks(&l.items.borrow(), |b| positional.extend_from_slice(b))?
                }
                Value::Tuple(t) => {
                    budget.in_blocks(t.items, |b| positional.extend_from_slice(b))?
                }
                Value::Elems(e) => {
                    budget.in_blocks(e.items, |b| positional.extend_from_slice(b))?
                }
                Value::Dict(d) => {
                    let map = d.map.borrow();
                    budget.charge_work(map.len() as u64)?;
                    positional.extend(map.iter().map(|(k, _)| k));
                }
                Value::Range(rg) => {
                    let n = rg.len();
                    self.heap
                        .charge(n as usize * std::mem::size_of::<Value>())?;
                    budget.charge_work(n as u64)?;
                    positional.extend((0..n).map(|i| Value::Int(rg.at(i))));
                }
                _ => {
                    return Err(Error::msg(format!(
                        "argument after * must be iterable, not {}",
                        v.type_name()
                    )))
                }
            }
        }
        if site.star_star {
            let v = self.stack[r];
            let Value::Dict(d) = v else {
                return Err(Error::msg(format!(
                    "argument after ** must be a mapping, not {}",
                    v.type_name()
                )));
            };
            let map = d.map.borrow();
            self.budget.charge_work(map.len() as u64 * ITEM_UNITS)?;
            for (k, v) in map.iter() {
                match k {
                    // Names are text; a key with invalid bytes (which no
                    // parameter has) goes on with U+FFFD in their place.
                    Value::Str(s) => named.push((
                        match std::str::from_utf8(s.text) {
                            Ok(t) => t,
                            Err(_) => self.heap.bump.alloc_str(&crate::text::lossy(s.text)),
                        },
                        v,
                    )),
                    _ => {
                        return Err(Error::msg(format!(
                            "keywords must be strings, not {}",
                            k.type_name()
                        )))
                    }
                }
            }
        }
        Ok(())
    }
}

/// A string as starlark-go's `repr` quotes it.
pub(super) fn quoted(s: &str) -> String {
    let mut out = String::new();
    crate::format::write_quoted(&mut out, s.as_bytes(), false);
    out
}
