//! The generator's static types: `Ty` (what every variable and expression
//! has), `Sig` (a function's parameters, defaults and result) and the
//! random choice of a type, weighted towards scalars and shallow
//! containers.

use super::Gen;

#[derive(Clone, PartialEq, Debug)]
pub(super) enum Ty {
    Int,
    Float,
    Bool,
    Str,
    NoneT,
    List(Box<Ty>),
    Tuple(Vec<Ty>),
    /// Keys are `Int` or `Str`.
    Dict(Box<Ty>, Box<Ty>),
    /// A dict display with these string keys.
    Rec(Vec<(&'static str, Ty)>),
    /// A function value: index into `Gen::sigs`.
    Func(usize),
}

impl Ty {
    pub(super) fn list(t: Ty) -> Ty {
        Ty::List(Box::new(t))
    }
    pub(super) fn dict(k: Ty, v: Ty) -> Ty {
        Ty::Dict(Box::new(k), Box::new(v))
    }
    /// Nesting depth of containers.
    pub(super) fn depth(&self) -> u32 {
        match self {
            Ty::List(t) => 1 + t.depth(),
            Ty::Tuple(ts) => 1 + ts.iter().map(Ty::depth).max().unwrap_or(0),
            Ty::Dict(_, v) => 1 + v.depth(),
            Ty::Rec(fs) => 1 + fs.iter().map(|f| f.1.depth()).max().unwrap_or(0),
            _ => 0,
        }
    }
    /// Values of this type can be ordered with `<`.
    pub(super) fn orderable(&self) -> bool {
        match self {
            Ty::Int | Ty::Float | Ty::Str | Ty::Bool => true,
            Ty::List(t) => t.orderable(),
            Ty::Tuple(ts) => ts.iter().all(Ty::orderable),
            _ => false,
        }
    }
    /// main may return values of this type directly (JSON-convertible and
    /// small ints only).
    pub(super) fn json_safe(&self) -> bool {
        match self {
            Ty::Str | Ty::Bool | Ty::NoneT | Ty::Float => true,
            Ty::List(t) => t.json_safe(),
            Ty::Tuple(ts) => ts.iter().all(Ty::json_safe),
            Ty::Dict(k, v) => **k == Ty::Str && v.json_safe(),
            Ty::Rec(fs) => fs.iter().all(|f| f.1.json_safe()),
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Sig {
    pub(super) params: Vec<(String, Ty)>,
    /// Literal defaults of the last parameters.
    pub(super) defaults: Vec<String>,
    pub(super) ret: Ty,
}

/// The field names of records.
pub(super) const FIELDS: &[&str] = &["id", "name", "n", "tags", "score"];

impl Gen {
    pub(super) fn pick_ty(&mut self, depth: u32) -> Ty {
        let w: &[u32] = if depth == 0 {
            &[30, 8, 6, 25, 1, 0, 0, 0, 0]
        } else {
            &[25, 7, 5, 20, 1, 16, 5, 9, 6]
        };
        match self.rng.weighted(w) {
            0 => Ty::Int,
            1 => Ty::Float,
            2 => Ty::Bool,
            3 => Ty::Str,
            4 => Ty::NoneT,
            5 => Ty::list(self.pick_ty(depth - 1)),
            6 => {
                let n = 1 + self.rng.below(3);
                Ty::Tuple((0..n).map(|_| self.pick_ty(depth - 1)).collect())
            }
            7 => {
                let k = self.key_ty();
                Ty::dict(k, self.pick_ty(depth - 1))
            }
            _ => {
                let n = 1 + self.rng.below(3);
                let mut fs: Vec<(&'static str, Ty)> = Vec::new();
                for _ in 0..n {
                    let f = *self.rng.pick(FIELDS);
                    if fs.iter().all(|x| x.0 != f) {
                        let t = self.pick_ty(depth - 1);
                        fs.push((f, t));
                    }
                }
                Ty::Rec(fs)
            }
        }
    }

    pub(super) fn key_ty(&mut self) -> Ty {
        if self.rng.chance(65) {
            Ty::Str
        } else {
            Ty::Int
        }
    }

    pub(super) fn scalar_ty(&mut self) -> Ty {
        match self.rng.weighted(&[40, 10, 8, 40]) {
            0 => Ty::Int,
            1 => Ty::Float,
            2 => Ty::Bool,
            _ => Ty::Str,
        }
    }

    pub(super) fn orderable_ty(&mut self) -> Ty {
        match self.rng.weighted(&[40, 12, 40, 5]) {
            0 => Ty::Int,
            1 => Ty::Float,
            2 => Ty::Str,
            _ => Ty::list(Ty::Int),
        }
    }
}
