//! Int, float and bool expressions: arithmetic (including big ints,
//! shifts and bitwise operators, floor division and modulo by small
//! constants), conversions (`int`, `float`, `bool`, `ord`, `hash`, `len`),
//! `min`/`max`, comparisons across and within types, `in`, `not`,
//! `and`/`or`, and the string predicates.

use super::types::Ty;
use super::Gen;

impl Gen {
    pub(super) fn int_expr(&mut self, d: u32) -> String {
        match self.rng.below(22) {
            0 | 1 => {
                let a = self.expr(&Ty::Int, d);
                let b = self.expr(&Ty::Int, d);
                let op = self.rng.pick(&["+", "-"]);
                format!("({a} {op} {b})")
            }
            2 => {
                let a = self.expr(&Ty::Int, d);
                let k = self.rng.range(-4, 9);
                format!("({a} * {k})")
            }
            3 => {
                let a = self.expr(&Ty::Int, d);
                let op = self.rng.pick(&["//", "%"]);
                let k = if self.rng.chance(12) {
                    self.expr(&Ty::Int, d)
                } else {
                    let mut k = self.rng.range(-7, 7);
                    if k == 0 {
                        k = 3;
                    }
                    format!("({k})")
                };
                format!("({a} {op} {k})")
            }
            4 => {
                let a = self.expr(&Ty::Int, d);
                let f = self.rng.pick(&["-", "abs", "~", "+"]);
                if *f == "abs" {
                    format!("abs({a})")
                } else {
                    format!("({f}{a})")
                }
            }
            5 => {
                let a = self.expr(&Ty::Int, d);
                let k = self.rng.range(0, 70);
                let op = self.rng.pick(&["<<", ">>"]);
                format!("({a} {op} {k})")
            }
            6 => {
                let a = self.expr(&Ty::Int, d);
                let b = self.expr(&Ty::Int, d);
                let op = self.rng.pick(&["&", "|", "^"]);
                format!("({a} {op} {b})")
            }
            7 | 8 => {
                let t = if self.rng.chance(40) {
                    Ty::Str
                } else {
                    self.pick_ty(2)
                };
                let x = self.container_or_str(&t, d);
                format!("len({x})")
            }
            9 => match self.rng.below(6) {
                0 => format!("int({})", self.expr(&Ty::Float, d)),
                1 => format!("int(str({}))", self.expr(&Ty::Int, d)),
                2 => format!("int({})", self.expr(&Ty::Bool, d)),
                3 => {
                    let (s, b) = *self.rng.pick(&[
                        ("\"ff\"", "16"),
                        ("\"0x1f\"", "0"),
                        ("\"-12\"", "10"),
                        ("\"0b101\"", "0"),
                        ("\"777\"", "8"),
                        ("\"zz\"", "36"),
                        ("\"0o17\"", "0"),
                        ("\"12\"", "3"),
                    ]);
                    format!("int({s}, {b})")
                }
                4 => format!(
                    "int({})",
                    self.rng.pick(&[
                        "\"42\"",
                        "\"-7\"",
                        "\"+3\"",
                        "\"0\"",
                        "\"123456789012345678901234\""
                    ])
                ),
                _ if self.rng.chance(20) => format!("int({})", self.expr(&Ty::Str, d)),
                _ => format!("int({})", self.expr(&Ty::Int, d)),
            },
            10 => {
                let s = self.expr(&Ty::Str, d);
                let t = self.expr(&Ty::Str, 0);
                let m = self.rng.pick(&[
                    "find", "count", "rfind", "find", "count", "rfind", "index", "rindex",
                ]);
                if self.rng.chance(20) {
                    let a = self.rng.range(-3, 4);
                    format!("{s}.{m}({t}, {a})")
                } else {
                    format!("{s}.{m}({t})")
                }
            }
            11 => {
                let f = self.rng.pick(&["min", "max"]);
                if self.rng.chance(50) {
                    let a = self.expr(&Ty::Int, d);
                    let b = self.expr(&Ty::Int, d);
                    format!("{f}({a}, {b})")
                } else {
                    let l = self.expr(&Ty::list(Ty::Int), d);
                    let a = self.expr(&Ty::Int, 0);
                    if self.rng.chance(30) {
                        let e = self.fresh("e");
                        format!("{f}({l} + [{a}], key=lambda {e}: -{e})")
                    } else {
                        format!("{f}({l} + [{a}])")
                    }
                }
            }
            12 => {
                let s = self.expr(&Ty::Str, 0);
                if self.rng.chance(50) {
                    format!("hash({s})")
                } else {
                    let c = self
                        .rng
                        .pick(&["\"a\"", "\"Z\"", "\"0\"", "\" \"", "\"~\""]);
                    format!("ord({c})")
                }
            }
            13 => {
                let a = self.expr(&Ty::Int, d);
                let b = self.expr(&Ty::Int, d);
                let op = self.rng.pick(&["and", "or"]);
                format!("({a} {op} {b})")
            }
            14 => {
                let l = self.expr(&Ty::list(Ty::Int), d);
                let x = self.expr(&Ty::Int, 0);
                format!("({l} + [{x}]).index({x})")
            }
            15 => {
                let a = self.rng.range(-5, 5);
                let b = self.rng.range(-5, 12);
                let mut s = self.rng.range(-3, 3);
                if s == 0 {
                    s = 1;
                }
                match self.rng.below(3) {
                    0 => format!("len(range({a}, {b}, {s}))"),
                    1 => format!("range({a}, {b} + 20, {s})[{}]", self.rng.range(-2, 2)),
                    _ => format!("len(range({}))", self.expr(&Ty::Int, 0)),
                }
            }
            _ => self.leaf(&Ty::Int),
        }
    }

    pub(super) fn float_expr(&mut self, d: u32) -> String {
        match self.rng.below(10) {
            0 | 1 => {
                let a = self.expr(&Ty::Float, d);
                let bt = if self.rng.chance(50) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                let b = self.expr(&bt, d);
                let op = self.rng.pick(&["+", "-"]);
                format!("({a} {op} {b})")
            }
            2 => {
                let a = self.expr(&Ty::Float, d);
                let k = self.rng.pick(&["0.5", "2", "3", "-1.5", "10"]);
                format!("({a} * {k})")
            }
            3 => {
                let at = if self.rng.chance(50) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                let a = self.expr(&at, d);
                let op = self.rng.pick(&["/", "/", "//", "%"]);
                let k = if self.rng.chance(10) {
                    self.expr(&Ty::Float, d)
                } else {
                    self.rng
                        .pick(&["2.0", "0.5", "3", "(-4)", "1.5", "7"])
                        .to_string()
                };
                if *op == "/" || at == Ty::Float {
                    format!("({a} {op} {k})")
                } else {
                    format!("({a} {op} 2.5)")
                }
            }
            4 => format!("float({})", self.expr(&Ty::Int, d)),
            5 => {
                let s = self.rng.pick(&[
                    "\"1.5\"",
                    "\"-2\"",
                    "\"1e3\"",
                    "\"inf\"",
                    "\"-inf\"",
                    "\"0.1\"",
                    "\"1_000.5\"",
                ]);
                format!("float({s})")
            }
            6 => {
                let a = self.expr(&Ty::Float, d);
                if self.rng.chance(50) {
                    format!("(-{a})")
                } else {
                    format!("abs({a})")
                }
            }
            7 => {
                let f = self.rng.pick(&["min", "max"]);
                let a = self.expr(&Ty::Float, d);
                let b = self.expr(&Ty::Float, d);
                format!("{f}({a}, {b})")
            }
            8 => {
                let a = self.expr(&Ty::Int, d);
                let b = self.rng.range(1, 9);
                format!("({a} / {b})")
            }
            _ => self.leaf(&Ty::Float),
        }
    }

    pub(super) fn bool_expr(&mut self, d: u32) -> String {
        match self.rng.below(14) {
            0 | 1 => {
                let t = self.orderable_ty();
                let a = self.expr(&t, d);
                let b = self.expr(&t, d);
                let op = self.rng.pick(&["<", "<=", ">", ">="]);
                format!("({a} {op} {b})")
            }
            2 | 3 => {
                let t = self.pick_ty(1);
                let a = self.expr(&t, d);
                let b = self.expr(&t, d);
                let op = self.rng.pick(&["==", "!="]);
                format!("({a} {op} {b})")
            }
            4 => {
                let t = self.scalar_ty();
                let x = self.expr(&t, d);
                let l = self.expr(&Ty::list(t), d);
                let op = self.rng.pick(&["in", "not in"]);
                format!("({x} {op} {l})")
            }
            5 => {
                let k = self.key_ty();
                let v = self.pick_ty(1);
                let x = self.expr(&k, d);
                let dd = self.expr(&Ty::dict(k, v), d);
                format!("({x} in {dd})")
            }
            6 => {
                let a = self.expr(&Ty::Str, d);
                let b = self.expr(&Ty::Str, d);
                let op = self.rng.pick(&["in", "not in"]);
                format!("({a} {op} {b})")
            }
            7 => format!("(not {})", self.expr(&Ty::Bool, d)),
            8 => {
                let a = self.expr(&Ty::Bool, d);
                let b = self.expr(&Ty::Bool, d);
                let op = self.rng.pick(&["and", "or"]);
                format!("({a} {op} {b})")
            }
            9 => {
                let t = self.pick_ty(1);
                format!("bool({})", self.expr(&t, d))
            }
            10 => {
                let s = self.expr(&Ty::Str, d);
                let t = self.expr(&Ty::Str, 0);
                let m = self.rng.pick(&["startswith", "endswith"]);
                format!("{s}.{m}({t})")
            }
            11 => {
                let s = self.expr(&Ty::Str, d);
                let m = self.rng.pick(&[
                    "isdigit", "isalpha", "isspace", "islower", "isupper", "isalnum", "istitle",
                ]);
                format!("{s}.{m}()")
            }
            12 => {
                let a = self.expr(&Ty::Int, d);
                let b = self.expr(&Ty::Float, d);
                let op = self.rng.pick(&["<", "==", ">=", "!="]);
                format!("({a} {op} {b})")
            }
            _ => self.leaf(&Ty::Bool),
        }
    }
}
