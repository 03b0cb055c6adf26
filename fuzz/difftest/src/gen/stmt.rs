//! Statements and blocks: assignments of new names and rebinding of old
//! ones (a type may change only at the top level of a function body),
//! observations appended to main's `out`, rebuilds of a variable from a
//! display or comprehension that reads it (`x = [x, x]`), swaps and nested
//! unpacking, `if`/`elif`/`else`, `for` with `break`/`continue`, `print`.
//! A block's new names leave the generator's scope at its end.

use super::scope::Var;
use super::types::{Ty, FIELDS};
use super::Gen;

impl Gen {
    pub(super) fn stmt(&mut self) {
        if self.rng.chance(self.opts.error_pct) {
            self.error_stmt();
            return;
        }
        let nested = self.block > 0;
        let deep = self.block >= 2;
        match self.rng.below(30) {
            0..=4 => self.assign_new(),
            5 | 6 => self.reassign(),
            7..=9 if self.in_main => self.observe(),
            10 if !nested => self.rebuild(),
            11 => self.swap_or_unpack(),
            12 | 13 => self.augmented(),
            14..=17 => self.mutate(),
            18 | 19 if !deep => self.if_stmt(),
            20 | 21 if !deep && self.loop_depth < 2 => self.for_stmt(),
            22 if !nested && self.level < 3 => self.nested_def(),
            23 if !nested => self.lambda_var(),
            24 if self.loop_depth > 0 => {
                let c = self.expr(&Ty::Bool, 1);
                let kw = self.rng.pick(&["break", "continue"]);
                self.emit(format!("if {c}:"));
                self.indent += 1;
                self.emit(kw);
                self.indent -= 1;
            }
            25 => {
                let t = self.pick_ty(1);
                let e = self.expr(&t, 2);
                self.emit(format!("print({e})"));
            }
            26 if !self.in_main || self.level > 1 => {
                // An early return from a def.
                let _ = self.level;
                self.assign_new();
            }
            _ => self.assign_new(),
        }
    }

    /// Runs `f` as a block: bindings made inside are dropped after it.
    pub(super) fn block(&mut self, f: impl FnOnce(&mut Gen)) {
        let saved = self.vars.clone();
        self.block += 1;
        self.indent += 1;
        let before = self.lines.len();
        f(self);
        if self.lines.len() == before {
            self.emit("pass");
        }
        self.indent -= 1;
        self.block -= 1;
        // Keep the pins set inside.
        let pinned: Vec<String> = self
            .vars
            .iter()
            .filter(|v| v.pinned)
            .map(|v| v.name.clone())
            .collect();
        self.vars = saved;
        for v in &mut self.vars {
            if pinned.contains(&v.name) {
                v.pinned = true;
            }
        }
    }

    pub(super) fn assign_new(&mut self) {
        let ty = self.pick_ty(2);
        let e = self.expr(&ty, 3);
        let name = self.fresh("v");
        self.emit(format!("{name} = {e}"));
        self.bind(&name, ty);
        if self.in_main && self.level == 1 && self.rng.chance(35) {
            let o = self.observe_expr(&name, &self.vars.last().unwrap().ty.clone());
            self.emit(format!("out.append({o})"));
        }
    }

    pub(super) fn reassign(&mut self) {
        let nested = self.block > 0;
        let Some((i, name, ty)) = self.own_var(|_| true) else {
            return self.assign_new();
        };
        let new_ty = if nested || self.vars[i].pinned || self.rng.chance(70) {
            ty
        } else {
            self.pick_ty(2)
        };
        let e = self.expr(&new_ty, 3);
        self.emit(format!("{name} = {e}"));
        self.vars[i].ty = new_ty;
    }

    /// What main appends to `out` to observe `name` of type `ty`.
    pub(super) fn observe_expr(&mut self, name: &str, ty: &Ty) -> String {
        match self.rng.below(6) {
            0 if ty.json_safe() => name.to_string(),
            1 if *ty == Ty::Float => format!("str({name})"),
            2 => format!("str({name})"),
            3 => format!("[type({name}), len(repr({name}))]"),
            _ => format!("repr({name})"),
        }
    }

    pub(super) fn observe(&mut self) {
        if let Some((name, ty)) = self.any_var() {
            let o = self.observe_expr(&name, &ty);
            self.emit(format!("out.append({o})"));
        } else {
            let t = self.pick_ty(1);
            let e = self.expr(&t, 2);
            self.emit(format!("out.append(repr({e}))"));
        }
    }

    /// Rebuilds a variable from a display or comprehension that reads it.
    pub(super) fn rebuild(&mut self) {
        let Some((i, name, ty)) = self.own_var(|_| true) else {
            return self.assign_new();
        };
        if self.vars[i].pinned {
            return self.reassign();
        }
        match self.rng.below(5) {
            0 if ty.depth() < 3 && self.loop_depth == 0 => {
                self.emit(format!("{name} = [{name}, {name}]"));
                self.vars[i].ty = Ty::list(ty);
            }
            1 if ty == Ty::Str || ty == Ty::Int => {
                self.emit(format!("{name} = {{{name}: {name}}}"));
                self.vars[i].ty = Ty::dict(ty.clone(), ty);
            }
            2 => {
                if let Ty::Rec(fs) = &ty {
                    let mut items = Vec::new();
                    let mut nfs = Vec::new();
                    for (f, t) in fs.clone() {
                        if self.rng.chance(70) {
                            items.push(format!("\"{f}\": {name}[\"{f}\"]"));
                        } else {
                            let e = self.expr(&t, 2);
                            items.push(format!("\"{f}\": {e}"));
                        }
                        nfs.push((f, t));
                    }
                    if self.rng.chance(40) {
                        let f = *self.rng.pick(FIELDS);
                        if nfs.iter().all(|x| x.0 != f) {
                            let t = self.scalar_ty();
                            let e = self.expr(&t, 2);
                            items.push(format!("\"{f}\": {e}"));
                            nfs.push((f, t));
                        }
                    }
                    self.emit(format!("{name} = {{{}}}", items.join(", ")));
                    self.vars[i].ty = Ty::Rec(nfs);
                } else {
                    let fs = vec![("id", ty.clone())];
                    self.emit(format!("{name} = {{\"id\": {name}}}"));
                    self.vars[i].ty = Ty::Rec(fs);
                }
            }
            3 => {
                if let Ty::List(t) = &ty {
                    let e = self.fresh("e");
                    self.vars.push(Var {
                        name: e.clone(),
                        ty: (**t).clone(),
                        level: self.level,
                        pinned: true,
                    });
                    let c = self.expr(&Ty::Bool, 2);
                    let x = self.expr(t, 2);
                    self.vars.pop();
                    self.emit(format!("{name} = [{x} for {e} in {name} if {c}]"));
                } else if let Ty::Dict(k, v) = &ty {
                    let (kk, vv) = (self.fresh("e"), self.fresh("e"));
                    self.emit(format!(
                        "{name} = {{{kk}: {vv} for {kk}, {vv} in {name}.items() if {vv} != {kk}}}"
                    ));
                    let _ = (k, v);
                } else {
                    self.emit(format!("{name} = ({name}, {name})"));
                    self.vars[i].ty = Ty::Tuple(vec![ty.clone(), ty]);
                }
            }
            _ => {
                let e = self.expr(&ty, 2);
                self.emit(format!("{name} = [{name}, {e}][-1]"));
            }
        }
        if self.in_main && self.level == 1 && self.rng.chance(50) {
            let t = self.vars[i].ty.clone();
            let o = self.observe_expr(&name, &t);
            self.emit(format!("out.append({o})"));
        }
    }

    pub(super) fn swap_or_unpack(&mut self) {
        let nested = self.block > 0;
        match self.rng.below(3) {
            0 => {
                // a, b = b, a
                let cands: Vec<usize> = (0..self.vars.len())
                    .filter(|&i| self.vars[i].level == self.level)
                    .collect();
                if cands.len() < 2 {
                    return self.assign_new();
                }
                let i = *self.rng.pick(&cands);
                let j = *self.rng.pick(&cands);
                if i == j {
                    return;
                }
                let (ti, tj) = (self.vars[i].ty.clone(), self.vars[j].ty.clone());
                if ti != tj && (nested || self.vars[i].pinned || self.vars[j].pinned) {
                    return self.reassign();
                }
                let (a, b) = (self.vars[i].name.clone(), self.vars[j].name.clone());
                self.emit(format!("{a}, {b} = {b}, {a}"));
                self.vars[i].ty = tj;
                self.vars[j].ty = ti;
            }
            1 => {
                // New names from a tuple.
                let n = 2 + self.rng.below(2);
                let ts: Vec<Ty> = (0..n).map(|_| self.scalar_ty()).collect();
                let e = self.expr(&Ty::Tuple(ts.clone()), 2);
                let names: Vec<String> = ts.iter().map(|_| self.fresh("v")).collect();
                let lhs = if self.rng.chance(30) {
                    format!("[{}]", names.join(", "))
                } else {
                    names.join(", ")
                };
                self.emit(format!("{lhs} = {e}"));
                for (n, t) in names.iter().zip(ts) {
                    self.bind(n, t);
                }
            }
            _ => {
                // Nested unpacking.
                let (a, b, c) = (self.fresh("v"), self.fresh("v"), self.fresh("v"));
                let x = self.expr(&Ty::Int, 1);
                let y = self.expr(&Ty::Str, 1);
                let z = self.expr(&Ty::list(Ty::Int), 1);
                self.emit(format!("({a}, {b}), {c} = ({x}, {y}), {z}"));
                self.bind(&a, Ty::Int);
                self.bind(&b, Ty::Str);
                self.bind(&c, Ty::list(Ty::Int));
            }
        }
    }

    pub(super) fn if_stmt(&mut self) {
        let c = self.expr(&Ty::Bool, 2);
        self.emit(format!("if {c}:"));
        let n = 1 + self.rng.below(3);
        self.block(|g| {
            for _ in 0..n {
                g.stmt();
            }
        });
        for _ in 0..self.rng.below(3) {
            let c = self.expr(&Ty::Bool, 2);
            self.emit(format!("elif {c}:"));
            self.block(|g| g.stmt());
        }
        if self.rng.chance(40) {
            self.emit("else:");
            self.block(|g| g.stmt());
        }
    }

    pub(super) fn for_stmt(&mut self) {
        let (src, elems) = self.iter_source(1, true);
        self.loop_depth += 1;
        let names: Vec<String> = elems.iter().map(|_| self.fresh("e")).collect();
        let target = if names.len() > 1 && self.rng.chance(20) {
            format!("({})", names.join(", "))
        } else {
            names.join(", ")
        };
        self.emit(format!("for {target} in {src}:"));
        let n = 1 + self.rng.below(3);
        self.block(|g| {
            for (nm, t) in names.iter().zip(&elems) {
                g.vars.push(Var {
                    name: nm.clone(),
                    ty: t.clone(),
                    level: g.level,
                    pinned: true,
                });
            }
            for _ in 0..n {
                g.stmt();
            }
        });
        self.loop_depth -= 1;
    }
}
