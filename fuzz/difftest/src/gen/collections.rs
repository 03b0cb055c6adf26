//! List, tuple, dict and record expressions, and what iterates: displays,
//! list and dict comprehensions (with a second `for` and an `if`),
//! `sorted` with `key`/`reverse`, `reversed`, slicing, `range`, `split`,
//! `keys`/`values`/`items`, `enumerate`, `zip`, `dict(...)`, `|`, and the
//! iteration sources of comprehensions and `for` loops (bounded in loops,
//! so that sizes stay small).

use super::types::Ty;
use super::Gen;

impl Gen {
    /// An iteration source with an element type: `(source, elem, is_pair)`
    /// where a pair source binds two names (`k, v`).
    pub(super) fn iter_source(&mut self, d: u32, bounded: bool) -> (String, Vec<Ty>) {
        let cut = |g: &mut Gen, s: String| -> String {
            if bounded || g.rng.chance(30) {
                format!("{s}[:{}]", g.rng.range(1, 5))
            } else {
                s
            }
        };
        match self.rng.below(8) {
            0 => {
                let n = self.rng.range(0, 6);
                if self.rng.chance(30) {
                    let a = self.rng.range(-3, 2);
                    let s = self.rng.pick(&[1, 2, -1, 3]);
                    (format!("range({a}, {n}, {s})"), vec![Ty::Int])
                } else {
                    (format!("range({n})"), vec![Ty::Int])
                }
            }
            1 => {
                let k = self.key_ty();
                let v = self.pick_ty(1);
                let dv = self.expr(&Ty::dict(k.clone(), v.clone()), d);
                if self.rng.chance(50) {
                    (format!("{dv}.items()"), vec![k, v])
                } else {
                    (dv, vec![k])
                }
            }
            2 => {
                let t = self.scalar_ty();
                let l = self.expr(&Ty::list(t.clone()), d);
                let l = cut(self, l);
                (format!("enumerate({l})"), vec![Ty::Int, t])
            }
            3 => {
                let s = self.expr(&Ty::Str, d);
                if bounded {
                    let k = self.rng.range(1, 5);
                    (format!("{s}[:{k}].elems()"), vec![Ty::Str])
                } else {
                    (format!("{s}.elems()"), vec![Ty::Str])
                }
            }
            4 => {
                let a = self.scalar_ty();
                let b = self.scalar_ty();
                let la = self.expr(&Ty::list(a.clone()), d);
                let la = cut(self, la);
                let lb = self.expr(&Ty::list(b.clone()), d);
                (format!("zip({la}, {lb})"), vec![a, b])
            }
            _ => {
                let t = self.pick_ty(1);
                let l = self.expr(&Ty::list(t.clone()), d);
                (cut(self, l), vec![t])
            }
        }
    }

    pub(super) fn comprehension_clauses(&mut self, d: u32) -> (String, usize) {
        let (src, elems) = self.iter_source(d, false);
        let target = self.bind_targets(&elems);
        let mut text = format!("for {target} in {src}");
        let mut bound = elems.len();
        if self.rng.chance(15) {
            let (src2, elems2) = self.iter_source(0, true);
            let target2 = self.bind_targets(&elems2);
            text.push_str(&format!(" for {target2} in {src2}"));
            bound += elems2.len();
        }
        if self.rng.chance(35) {
            let c = self.expr(&Ty::Bool, d);
            text.push_str(&format!(" if {c}"));
        }
        (text, bound)
    }

    pub(super) fn list_expr(&mut self, t: &Ty, d: u32) -> String {
        let lt = Ty::list(t.clone());
        match self.rng.below(16) {
            0 | 1 => {
                let n = self.rng.below(4);
                let items: Vec<String> = (0..n).map(|_| self.expr(t, d)).collect();
                format!("[{}]", items.join(", "))
            }
            2 | 3 => {
                let (clauses, n) = self.comprehension_clauses(d);
                let e = self.expr(t, d);
                self.pop_vars(n);
                format!("[{e} {clauses}]")
            }
            4 if t.orderable() => {
                let l = self.expr(&lt, d);
                match self.rng.below(3) {
                    0 => format!("sorted({l})"),
                    1 => format!("sorted({l}, reverse = {})", self.literal(&Ty::Bool)),
                    _ => {
                        let e = self.fresh("e");
                        let key = self.key_fn(t, &e, d);
                        format!("sorted({l}, key=lambda {e}: {key})")
                    }
                }
            }
            4 => {
                // sorted by a key computed from a non-orderable element.
                let l = self.expr(&lt, d);
                let e = self.fresh("e");
                format!("sorted({l}, key=lambda {e}: repr({e}), reverse=True)")
            }
            5 => format!("reversed({})", self.expr(&lt, d)),
            6 => {
                let l = self.expr(&lt, d);
                let sl = self.slice();
                format!("{l}{sl}")
            }
            7 => {
                let a = self.expr(&lt, d);
                let b = self.expr(&lt, d);
                format!("({a} + {b}[:{}])", self.rng.range(0, 3))
            }
            8 => {
                let l = self.literal(&lt);
                format!("({l} * {})", self.rng.range(-1, 3))
            }
            9 => match t {
                Ty::Int => {
                    let a = self.rng.range(-3, 3);
                    let b = self.rng.range(-3, 8);
                    let mut s = self.rng.range(-2, 3);
                    if s == 0 {
                        s = 1;
                    }
                    format!("list(range({a}, {b}, {s}))")
                }
                Ty::Str => {
                    let s = self.expr(&Ty::Str, d);
                    match self.rng.below(6) {
                        0 => format!("{s}.split()"),
                        1 => format!(
                            "{s}.split({})",
                            self.rng.pick(&["\",\"", "\"-\"", "\" \"", "\"a\""])
                        ),
                        2 => format!("{s}.rsplit(\" \", {})", self.rng.range(-1, 2)),
                        3 => format!("{s}.splitlines()"),
                        4 => format!("list({s}.elems())"),
                        _ => format!("{s}.split(\",\", 1)"),
                    }
                }
                _ => self.leaf(&lt),
            },
            10 => {
                let k = self.key_ty();
                let dv = self.expr(&Ty::dict(k.clone(), t.clone()), d);
                format!("{dv}.values()")
            }
            11 => match t {
                Ty::Int | Ty::Str => {
                    let dv = {
                        let v = self.pick_ty(1);
                        self.expr(&Ty::dict(t.clone(), v), d)
                    };
                    if self.rng.chance(50) {
                        format!("{dv}.keys()")
                    } else {
                        format!("sorted({dv})")
                    }
                }
                Ty::Tuple(ts) if ts.len() == 2 => {
                    if ts[0] == Ty::Int && self.rng.chance(50) {
                        let l = self.expr(&Ty::list(ts[1].clone()), d);
                        format!("enumerate({l})")
                    } else if (ts[0] == Ty::Str || ts[0] == Ty::Int) && self.rng.chance(50) {
                        let dv = self.expr(&Ty::dict(ts[0].clone(), ts[1].clone()), d);
                        format!("{dv}.items()")
                    } else {
                        let a = self.expr(&Ty::list(ts[0].clone()), d);
                        let b = self.expr(&Ty::list(ts[1].clone()), d);
                        format!("zip({a}, {b})")
                    }
                }
                _ => self.leaf(&lt),
            },
            12 if t.depth() < 3 && self.loop_depth == 0 => {
                let x = self.expr(t, 0);
                format!("[{x}, {x}]")
            }
            _ => self.leaf(&lt),
        }
    }

    /// A sort key for an element named `e` of type `t` (orderable result).
    pub(super) fn key_fn(&mut self, t: &Ty, e: &str, _d: u32) -> String {
        match t {
            Ty::Int => self
                .rng
                .pick(&[
                    format!("-{e}"),
                    format!("{e} % 3"),
                    format!("abs({e})"),
                    format!("str({e})"),
                ])
                .clone(),
            Ty::Float => format!("-{e}"),
            Ty::Str => self
                .rng
                .pick(&[
                    format!("len({e})"),
                    format!("{e}.lower()"),
                    format!("{e}[::-1]"),
                ])
                .clone(),
            _ => format!("repr({e})"),
        }
    }

    pub(super) fn tuple_expr(&mut self, ts: &[Ty], d: u32) -> String {
        if ts.len() == 3 && ts.iter().all(|t| *t == Ty::Str) && self.rng.chance(40) {
            let s = self.expr(&Ty::Str, d);
            let sep = self.rng.pick(&["\",\"", "\"-\"", "\" \"", "\"b\""]);
            let m = self.rng.pick(&["partition", "rpartition"]);
            return format!("{s}.{m}({sep})");
        }
        if ts.len() >= 2 && self.rng.chance(25) {
            let a = self.expr(&Ty::Tuple(ts[..1].to_vec()), d);
            let b = self.expr(&Ty::Tuple(ts[1..].to_vec()), d);
            return format!("({a} + {b})");
        }
        let items: Vec<String> = ts.iter().map(|t| self.expr(t, d)).collect();
        if items.len() == 1 {
            format!("({},)", items[0])
        } else {
            format!("({})", items.join(", "))
        }
    }

    pub(super) fn dict_expr(&mut self, k: &Ty, v: &Ty, d: u32) -> String {
        let dt = Ty::dict(k.clone(), v.clone());
        match self.rng.below(10) {
            0 | 1 => {
                let n = self.rng.below(4);
                let items: Vec<String> = (0..n)
                    .map(|_| format!("{}: {}", self.expr(k, d), self.expr(v, d)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            2 | 3 => {
                let (clauses, n) = self.comprehension_clauses(d);
                let ke = self.expr(k, d);
                let ve = self.expr(v, d);
                self.pop_vars(n);
                format!("{{{ke}: {ve} {clauses}}}")
            }
            4 => {
                let a = self.expr(&Ty::list(k.clone()), d);
                let b = self.expr(&Ty::list(v.clone()), d);
                format!("dict(zip({a}, {b}))")
            }
            5 => {
                let a = self.expr(&dt, d);
                let b = self.expr(&dt, d);
                format!("({a} | {b})")
            }
            6 => format!("dict({})", self.expr(&dt, d)),
            7 if *k == Ty::Str => {
                let a = self.expr(v, d);
                let b = self.expr(v, d);
                format!("dict(a = {a}, b = {b})")
            }
            8 if k == v => {
                let x = self.expr(k, 0);
                format!("{{{x}: {x}}}")
            }
            _ => {
                let pairs: Vec<String> = (0..self.rng.below(3))
                    .map(|_| format!("({}, {})", self.expr(k, d), self.expr(v, d)))
                    .collect();
                format!("dict([{}])", pairs.join(", "))
            }
        }
    }

    pub(super) fn rec_expr(&mut self, fs: &[(&'static str, Ty)], d: u32) -> String {
        let items: Vec<String> = fs
            .iter()
            .map(|(f, t)| format!("\"{f}\": {}", self.expr(t, d)))
            .collect();
        format!("{{{}}}", items.join(", "))
    }

    pub(super) fn container_or_str(&mut self, t: &Ty, d: u32) -> String {
        match t {
            Ty::Str | Ty::List(_) | Ty::Dict(..) | Ty::Tuple(_) | Ty::Rec(_) => self.expr(t, d),
            _ => self.expr(&Ty::Str, d),
        }
    }
}
