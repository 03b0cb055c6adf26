//! Statements that change a value in place: augmented assignments to
//! variables, list elements, dict entries and record fields, and the
//! mutating methods of lists (`append`, `extend`, `insert`, `pop`,
//! `remove`, `clear`) and dicts (`update`, `setdefault`, `pop`, `popitem`,
//! `clear`), guarded so that they do not fail unless the program means to.

use super::types::Ty;
use super::Gen;

impl Gen {
    pub(super) fn augmented(&mut self) {
        let Some((_, name, ty)) = self.own_var(|t| {
            matches!(
                t,
                Ty::Int | Ty::Float | Ty::Str | Ty::List(_) | Ty::Dict(..) | Ty::Rec(_)
            )
        }) else {
            return self.assign_new();
        };
        match &ty {
            Ty::Int => {
                let op = self.rng.pick(&[
                    "+=", "-=", "*=", "//=", "%=", "&=", "|=", "^=", "<<=", ">>=",
                ]);
                let rhs = match *op {
                    "*=" => self.rng.range(-3, 5).to_string(),
                    "//=" | "%=" => {
                        let mut k = self.rng.range(-5, 9);
                        if k == 0 && !self.rng.chance(10) {
                            k = 2;
                        }
                        k.to_string()
                    }
                    "<<=" | ">>=" => self.rng.range(0, 8).to_string(),
                    _ => self.expr(&Ty::Int, 2),
                };
                self.emit(format!("{name} {op} {rhs}"));
            }
            Ty::Float => {
                let op = self.rng.pick(&["+=", "-=", "*=", "/="]);
                let rhs = if *op == "*=" || *op == "/=" {
                    self.rng.pick(&["2", "0.5", "-1.5", "3"]).to_string()
                } else {
                    self.expr(&Ty::Float, 2)
                };
                self.emit(format!("{name} {op} {rhs}"));
            }
            Ty::Str => {
                let rhs = self.short_str(2);
                self.emit(format!("{name} += {rhs}"));
            }
            Ty::List(t) => {
                if **t == Ty::Int && self.rng.chance(50) {
                    let i = self.expr(&Ty::Int, 1);
                    let op = self.rng.pick(&["+=", "-=", "*=", "|="]);
                    let k = self.rng.range(1, 3);
                    self.emit(format!("if {name}:"));
                    self.indent += 1;
                    self.emit(format!("{name}[{i} % len({name})] {op} {k}"));
                    self.indent -= 1;
                } else {
                    let e = self.expr(&ty, 2);
                    let k = self.rng.range(0, 3);
                    self.emit(format!("{name} += {e}[:{k}]"));
                }
            }
            Ty::Dict(k, v) => {
                if **v == Ty::Int && self.rng.chance(60) {
                    let key = self.expr(k, 1);
                    let kv = self.fresh("v");
                    self.emit(format!("{kv} = {key}"));
                    self.emit(format!("if {kv} in {name}:"));
                    self.indent += 1;
                    let inc = self.rng.range(1, 5);
                    self.emit(format!("{name}[{kv}] += {inc}"));
                    self.indent -= 1;
                    self.bind(&kv, (**k).clone());
                } else {
                    let e = self.expr(&ty, 2);
                    self.emit(format!("{name} |= {e}"));
                }
            }
            Ty::Rec(fs) => {
                if let Some((f, t)) = fs.iter().find(|f| matches!(f.1, Ty::Int | Ty::Str)) {
                    let rhs = if *t == Ty::Int {
                        self.rng.range(1, 5).to_string()
                    } else {
                        self.str_lit()
                    };
                    self.emit(format!("{name}[\"{f}\"] += {rhs}"));
                }
            }
            _ => {}
        }
    }

    pub(super) fn mutate(&mut self) {
        let Some((_, name, ty)) =
            self.own_var(|t| matches!(t, Ty::List(_) | Ty::Dict(..) | Ty::Rec(_)))
        else {
            return self.assign_new();
        };
        match &ty {
            Ty::List(t) => match self.rng.below(11) {
                0 | 1 => {
                    let e = self.expr(t, 2);
                    self.emit(format!("{name}.append({e})"));
                }
                2 => {
                    let e = self.expr(&ty, 2);
                    let k = self.rng.range(0, 3);
                    self.emit(format!("{name}.extend({e}[:{k}])"));
                }
                3 => {
                    let e = self.expr(t, 2);
                    let i = self.rng.range(-4, 5);
                    self.emit(format!("{name}.insert({i}, {e})"));
                }
                4 => {
                    let arg = if self.rng.chance(40) {
                        self.rng.range(-2, 1).to_string()
                    } else {
                        String::new()
                    };
                    if self.rng.chance(80) {
                        self.emit(format!("if {name}:"));
                        self.indent += 1;
                        self.emit(format!("{name}.pop({arg})"));
                        self.indent -= 1;
                    } else {
                        self.emit(format!("{name}.pop({arg})"));
                    }
                }
                5 => {
                    let e = self.expr(t, 1);
                    let v = self.fresh("v");
                    self.emit(format!("{v} = {e}"));
                    if self.rng.chance(95) {
                        self.emit(format!("if {v} in {name}:"));
                        self.indent += 1;
                        self.emit(format!("{name}.remove({v})"));
                        self.indent -= 1;
                    } else {
                        self.emit(format!("{name}.remove({v})"));
                    }
                    self.bind(&v, (**t).clone());
                }
                6 | 7 => {
                    let e = self.expr(t, 2);
                    let i = self.expr(&Ty::Int, 1);
                    self.emit(format!("if {name}:"));
                    self.indent += 1;
                    self.emit(format!("{name}[{i} % len({name})] = {e}"));
                    self.indent -= 1;
                }
                8 => {
                    let i = self.rng.range(-2, 1);
                    self.emit(format!("if {name}:"));
                    self.indent += 1;
                    self.emit(format!("{name}.pop({i})"));
                    self.indent -= 1;
                }
                9 => self.emit(format!("{name}.clear()")),
                _ => {
                    let e = self.expr(t, 2);
                    let i = self.rng.range(-3, 3);
                    if self.rng.chance(80) {
                        self.emit(format!("if len({name}) > {}:", i.abs()));
                        self.indent += 1;
                        self.emit(format!("{name}[{i}] = {e}"));
                        self.indent -= 1;
                    } else {
                        self.emit(format!("{name}[{i}] = {e}"));
                    }
                }
            },
            Ty::Dict(k, v) => match self.rng.below(9) {
                0 | 1 => {
                    let ke = self.expr(k, 1);
                    let ve = self.expr(v, 2);
                    self.emit(format!("{name}[{ke}] = {ve}"));
                }
                2 => {
                    let e = self.expr(&ty, 2);
                    self.emit(format!("{name}.update({e})"));
                }
                3 => {
                    let ke = self.expr(k, 1);
                    let ve = self.expr(v, 2);
                    let r = self.fresh("v");
                    self.emit(format!("{r} = {name}.setdefault({ke}, {ve})"));
                    self.bind(&r, (**v).clone());
                }
                4 => self.emit(format!("{name}.clear()")),
                5 | 6 => {
                    let ke = self.expr(k, 1);
                    if self.rng.chance(75) {
                        let kv = self.fresh("v");
                        self.emit(format!("{kv} = {ke}"));
                        self.emit(format!("if {kv} in {name}:"));
                        self.indent += 1;
                        self.emit(format!("{name}.pop({kv})"));
                        self.indent -= 1;
                        self.bind(&kv, (**k).clone());
                    } else {
                        self.emit(format!("{name}.pop({ke})"));
                    }
                }
                7 => {
                    let ke = self.expr(k, 1);
                    let dv = self.literal(v);
                    let r = self.fresh("v");
                    self.emit(format!("{r} = {name}.pop({ke}, {dv})"));
                    self.bind(&r, (**v).clone());
                }
                _ => {
                    if *k == Box::new(Ty::Str) {
                        let ve = self.expr(v, 2);
                        self.emit(format!("{name}.update(k = {ve})"));
                    } else {
                        self.emit(format!("if {name}:"));
                        self.indent += 1;
                        self.emit(format!("{name}.popitem()"));
                        self.indent -= 1;
                    }
                }
            },
            Ty::Rec(fs) => {
                let (f, t) = self.rng.pick(fs).clone();
                let e = self.expr(&t, 2);
                self.emit(format!("{name}[\"{f}\"] = {e}"));
            }
            _ => {}
        }
    }
}
