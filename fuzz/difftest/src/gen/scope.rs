//! The variables in the generator's scope: which names of which types a
//! function may read (globals and enclosing functions' names, which a read
//! from a nested function pins to their type), may rebind or mutate (its
//! own), and how names are bound and dropped.

use super::types::Ty;
use super::Gen;

#[derive(Clone, Debug)]
pub(super) struct Var {
    pub(super) name: String,
    pub(super) ty: Ty,
    /// Function nesting level that binds it (0: module globals).
    pub(super) level: usize,
    /// Read by a closure: its type must not change any more.
    pub(super) pinned: bool,
}

impl Gen {
    pub(super) fn vars_of(&self, ty: &Ty) -> Vec<usize> {
        self.vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.ty == *ty && (v.level == 0 || v.level <= self.level))
            .map(|(i, _)| i)
            .collect()
    }

    /// Reads variable `i`: a read from an enclosing function pins it.
    pub(super) fn read(&mut self, i: usize) -> String {
        let v = &mut self.vars[i];
        if v.level != 0 && v.level < self.level {
            v.pinned = true;
        }
        v.name.clone()
    }

    pub(super) fn var_of(&mut self, ty: &Ty) -> Option<String> {
        let c = self.vars_of(ty);
        if c.is_empty() {
            return None;
        }
        let i = *self.rng.pick(&c);
        Some(self.read(i))
    }

    /// A variable of the current function that may be mutated (not a
    /// frozen global, not a closure's).
    pub(super) fn own_var(&mut self, pred: impl Fn(&Ty) -> bool) -> Option<(usize, String, Ty)> {
        let c: Vec<usize> = self
            .vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.level == self.level && pred(&v.ty))
            .map(|(i, _)| i)
            .collect();
        if c.is_empty() {
            return None;
        }
        let i = *self.rng.pick(&c);
        Some((i, self.vars[i].name.clone(), self.vars[i].ty.clone()))
    }

    /// Any readable variable.
    pub(super) fn any_var(&mut self) -> Option<(String, Ty)> {
        let c: Vec<usize> = (0..self.vars.len())
            .filter(|&i| self.vars[i].level <= self.level)
            .collect();
        if c.is_empty() {
            return None;
        }
        let i = *self.rng.pick(&c);
        let n = self.read(i);
        Some((n, self.vars[i].ty.clone()))
    }

    /// Binds `name` to `ty` in the current function.
    pub(super) fn bind(&mut self, name: &str, ty: Ty) {
        let level = self.level;
        if let Some(v) = self
            .vars
            .iter_mut()
            .find(|v| v.name == name && v.level == level)
        {
            v.ty = ty;
            return;
        }
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            level,
            pinned: false,
        });
    }

    /// Binds comprehension or loop names for `elems`; returns the target
    /// text. The caller pops the bindings.
    pub(super) fn bind_targets(&mut self, elems: &[Ty]) -> String {
        let names: Vec<String> = elems.iter().map(|_| self.fresh("e")).collect();
        for (n, t) in names.iter().zip(elems) {
            self.vars.push(Var {
                name: n.clone(),
                ty: t.clone(),
                level: self.level,
                pinned: true,
            });
        }
        names.join(", ")
    }

    pub(super) fn pop_vars(&mut self, n: usize) {
        let len = self.vars.len();
        self.vars.truncate(len - n);
    }
}
