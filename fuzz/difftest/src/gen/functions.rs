//! Functions: signatures with positional and default parameters, the
//! program's top-level helpers, nested defs (closures over the enclosing
//! function's names) and lambdas, their bodies, and calls with positional
//! or keyword arguments of any function that returns a wanted type.

use super::scope::Var;
use super::types::{Sig, Ty};
use super::Gen;

/// The parameter list of a `def` with signature `sig`: the required
/// parameters, then the optional ones with their literal defaults.
fn param_list(sig: &Sig) -> String {
    let nreq = sig.params.len() - sig.defaults.len();
    let params: Vec<String> = sig
        .params
        .iter()
        .enumerate()
        .map(|(j, (p, _))| {
            if j >= nreq {
                format!("{p} = {}", sig.defaults[j - nreq])
            } else {
                p.clone()
            }
        })
        .collect();
    params.join(", ")
}

impl Gen {
    /// A new signature of at most `max_params` parameters (the last ones
    /// may have literal defaults); returns its index in `sigs`.
    pub(super) fn new_sig(&mut self, max_params: usize) -> usize {
        let n = self.rng.below(max_params + 1);
        let mut params = Vec::new();
        for _ in 0..n {
            let t = if self.rng.chance(75) {
                self.scalar_ty()
            } else {
                self.pick_ty(1)
            };
            let p = self.fresh("p");
            params.push((p, t));
        }
        let nd = if n > 0 { self.rng.below(n + 1) } else { 0 };
        let defaults: Vec<String> = params[n - nd..]
            .iter()
            .map(|(_, t)| t.clone())
            .collect::<Vec<_>>()
            .iter()
            .map(|t| self.literal(t))
            .collect();
        let ret = self.pick_ty(2);
        self.sigs.push(Sig {
            params,
            defaults,
            ret,
        });
        self.sigs.len() - 1
    }

    pub(super) fn helper(&mut self) {
        let s = self.new_sig(3);
        let name = self.fresh("helper");
        let sig = self.sigs[s].clone();
        self.emit(format!("def {name}({}):", param_list(&sig)));
        let n = 1 + self.rng.below(5);
        self.function_body(&sig, n);
        self.helpers.push((name, s));
    }

    pub(super) fn nested_def(&mut self) {
        let s = self.new_sig(2);
        let name = self.fresh("inner");
        let sig = self.sigs[s].clone();
        self.emit(format!("def {name}({}):", param_list(&sig)));
        let in_main = self.in_main;
        let n = 1 + self.rng.below(3);
        self.function_body(&sig, n);
        self.in_main = in_main;
        self.bind(&name, Ty::Func(s));
        let i = self.vars.len() - 1;
        self.vars[i].pinned = true;
        if self.rng.chance(60) {
            let a = self.args(s, 1);
            let r = self.fresh("v");
            self.emit(format!("{r} = {name}({a})"));
            self.bind(&r, sig.ret.clone());
        }
    }

    /// The body of a def at `self.level + 1` with the parameters of `sig`.
    pub(super) fn function_body(&mut self, sig: &Sig, n: usize) {
        let saved = (self.block, self.loop_depth);
        self.level += 1;
        self.indent += 1;
        self.block = 0;
        self.loop_depth = 0;
        let mark = self.vars.len();
        for (p, t) in &sig.params {
            self.vars.push(Var {
                name: p.clone(),
                ty: t.clone(),
                level: self.level,
                pinned: false,
            });
        }
        for _ in 0..n {
            self.stmt();
        }
        let r = self.expr(&sig.ret, 3);
        self.emit(format!("return {r}"));
        self.vars.truncate(mark);
        self.indent -= 1;
        self.level -= 1;
        (self.block, self.loop_depth) = saved;
    }

    /// A lambda of signature `i`.
    pub(super) fn lambda(&mut self, i: usize, d: u32) -> String {
        let sig = self.sigs[i].clone();
        self.level += 1;
        let mark = self.vars.len();
        let mut params = Vec::new();
        let nreq = sig.params.len() - sig.defaults.len();
        for (j, (p, t)) in sig.params.iter().enumerate() {
            self.vars.push(Var {
                name: p.clone(),
                ty: t.clone(),
                level: self.level,
                pinned: true,
            });
            if j >= nreq {
                params.push(format!("{p} = {}", sig.defaults[j - nreq]));
            } else {
                params.push(p.clone());
            }
        }
        let body = self.expr(&sig.ret, d.min(2));
        self.vars.truncate(mark);
        self.level -= 1;
        format!("(lambda {}: {body})", params.join(", "))
    }

    pub(super) fn lambda_var(&mut self) {
        let s = self.new_sig(2);
        let l = self.lambda(s, 2);
        let name = self.fresh("f");
        self.emit(format!("{name} = {l}"));
        self.bind(&name, Ty::Func(s));
        let i = self.vars.len() - 1;
        self.vars[i].pinned = true;
    }

    /// Arguments for a call of signature `i`.
    pub(super) fn args(&mut self, i: usize, d: u32) -> String {
        let sig = self.sigs[i].clone();
        let nreq = sig.params.len() - sig.defaults.len();
        let ngiven = nreq + self.rng.below(sig.defaults.len() + 1);
        let kw = self.rng.chance(25);
        let mut args = Vec::new();
        for (j, (p, t)) in sig.params.iter().enumerate().take(ngiven) {
            let a = self.expr(t, d);
            if kw && j >= nreq.min(1) {
                args.push(format!("{p} = {a}"));
            } else {
                args.push(a);
            }
        }
        args.join(", ")
    }

    /// A call of a helper or a function value returning `ty`.
    pub(super) fn call_returning(&mut self, ty: &Ty, d: u32) -> Option<String> {
        let mut cands: Vec<(String, usize)> = self
            .helpers
            .iter()
            .filter(|(_, s)| self.sigs[*s].ret == *ty)
            .cloned()
            .collect();
        for v in &self.vars {
            if let Ty::Func(s) = v.ty {
                if v.level <= self.level && self.sigs[s].ret == *ty {
                    cands.push((v.name.clone(), s));
                }
            }
        }
        if cands.is_empty() {
            return None;
        }
        let (name, s) = self.rng.pick(&cands).clone();
        if let Some(i) = self.vars.iter().position(|v| v.name == name) {
            self.read(i);
        }
        let a = self.args(s, d);
        Some(format!("{name}({a})"))
    }
}
