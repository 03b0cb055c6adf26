//! An expression of a wanted type: a leaf (a variable of that type or a
//! literal), or one of the productions every type shares (a conditional
//! expression, a call of a function returning it, an element of a list, a
//! dict value, a record field or a tuple element of that type), or else
//! a production of the type's own module.

use super::types::Ty;
use super::Gen;

impl Gen {
    pub(super) fn leaf(&mut self, ty: &Ty) -> String {
        if self.rng.chance(70) {
            if let Some(v) = self.var_of(ty) {
                return v;
            }
        }
        self.literal(ty)
    }

    /// An expression of type `ty`.
    pub(super) fn expr(&mut self, ty: &Ty, depth: u32) -> String {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        // Generic productions shared by every type.
        match self.rng.below(20) {
            0 => {
                let c = self.expr(&Ty::Bool, d);
                let a = self.expr(ty, d);
                let b = self.expr(ty, d);
                return format!("({a} if {c} else {b})");
            }
            1 => {
                if let Some(call) = self.call_returning(ty, d) {
                    return call;
                }
            }
            2 => {
                // Element of a list of this type.
                if let Some(l) = self.var_of(&Ty::list(ty.clone())) {
                    let i = self.expr(&Ty::Int, d);
                    let dflt = self.literal(ty);
                    return match self.rng.below(4) {
                        0 => format!("{l}[{}]", self.rng.range(-2, 2)),
                        1 => format!("({l}[-1] if {l} else {dflt})"),
                        _ => format!("({l}[{i} % len({l})] if {l} else {dflt})"),
                    };
                }
            }
            3 => {
                // A dict value of this type.
                let k = self.key_ty();
                if let Some(dv) = self.var_of(&Ty::dict(k.clone(), ty.clone())) {
                    let key = self.expr(&k, d);
                    let dflt = self.literal(ty);
                    return if self.rng.chance(20) {
                        format!("{dv}[{key}]")
                    } else {
                        format!("{dv}.get({key}, {dflt})")
                    };
                }
            }
            4 => {
                // A record field of this type.
                let recs: Vec<(String, &'static str)> = self
                    .vars
                    .iter()
                    .filter(|v| v.level <= self.level)
                    .filter_map(|v| match &v.ty {
                        Ty::Rec(fs) => fs
                            .iter()
                            .find(|f| f.1 == *ty)
                            .map(|f| (v.name.clone(), f.0)),
                        _ => None,
                    })
                    .collect();
                if !recs.is_empty() {
                    let (r, f) = self.rng.pick(&recs).clone();
                    return format!("{r}[\"{f}\"]");
                }
            }
            5 => {
                // A tuple element.
                let tups: Vec<(String, usize)> = self
                    .vars
                    .iter()
                    .filter(|v| v.level <= self.level)
                    .filter_map(|v| match &v.ty {
                        Ty::Tuple(ts) => {
                            ts.iter().position(|t| t == ty).map(|i| (v.name.clone(), i))
                        }
                        _ => None,
                    })
                    .collect();
                if !tups.is_empty() {
                    let (t, i) = self.rng.pick(&tups).clone();
                    return format!("{t}[{i}]");
                }
            }
            _ => {}
        }
        match ty {
            Ty::Int => self.int_expr(d),
            Ty::Float => self.float_expr(d),
            Ty::Bool => self.bool_expr(d),
            Ty::Str => self.str_expr(d),
            Ty::NoneT => "None".into(),
            Ty::List(t) => self.list_expr(t, d),
            Ty::Tuple(ts) => self.tuple_expr(ts, d),
            Ty::Dict(k, v) => self.dict_expr(k, v, d),
            Ty::Rec(fs) => self.rec_expr(fs, d),
            Ty::Func(i) => {
                if let Some(v) = self.var_of(ty) {
                    v
                } else {
                    self.lambda(*i, d)
                }
            }
        }
    }
}
