//! String expressions: concatenation with short operands, indexing and
//! slicing (negative indices, steps), the string methods, `join`, `str`/
//! `repr`/`type`, `chr`, repetition, `partition`, and the two formatting
//! languages (`%` with its conversions and `str.format` with positional,
//! indexed and named fields).

use super::types::Ty;
use super::Gen;

impl Gen {
    /// A short string operand (a literal or a prefix), so that repeated
    /// concatenation grows linearly.
    pub(super) fn short_str(&mut self, d: u32) -> String {
        if self.rng.chance(50) {
            self.str_lit()
        } else {
            let s = self.expr(&Ty::Str, d);
            format!("{s}[:{}]", self.rng.range(0, 4))
        }
    }

    pub(super) fn index_expr(&mut self) -> String {
        match self.rng.below(4) {
            0 => String::new(),
            1 => self.rng.range(-6, 6).to_string(),
            2 => self.rng.range(0, 3).to_string(),
            _ => format!("({})", self.rng.range(-3, -1)),
        }
    }

    pub(super) fn slice(&mut self) -> String {
        let a = self.index_expr();
        let b = self.index_expr();
        if self.rng.chance(40) {
            let mut s = self.rng.range(-3, 3);
            if s == 0 && !self.rng.chance(5) {
                s = -1;
            }
            format!("[{a}:{b}:{s}]")
        } else {
            format!("[{a}:{b}]")
        }
    }

    pub(super) fn str_expr(&mut self, d: u32) -> String {
        match self.rng.below(24) {
            0 | 1 => {
                let a = self.expr(&Ty::Str, d);
                let b = self.short_str(d);
                format!("({a} + {b})")
            }
            2 => {
                let s = self.expr(&Ty::Str, d);
                let i = self.expr(&Ty::Int, d);
                match self.rng.below(3) {
                    0 => format!("({s}[{i} % len({s})] if {s} else \"\")"),
                    1 => format!("{s}[{}]", self.rng.range(-3, 3)),
                    _ => format!("({s}[-1] if {s} else \"-\")"),
                }
            }
            3 | 4 => {
                let s = self.expr(&Ty::Str, d);
                let sl = self.slice();
                format!("{s}{sl}")
            }
            5 | 6 => {
                let s = self.expr(&Ty::Str, d);
                let m = *self.rng.pick(&[
                    "upper()",
                    "lower()",
                    "title()",
                    "capitalize()",
                    "strip()",
                    "lstrip()",
                    "rstrip()",
                    "strip(\"ab \")",
                    "rstrip(\"c\")",
                    "lstrip(\"-\")",
                ]);
                format!("{s}.{m}")
            }
            7 => {
                let s = self.expr(&Ty::Str, d);
                let a = self.expr(&Ty::Str, 0);
                let b = self.short_str(0);
                if self.rng.chance(30) {
                    format!("{s}.replace({a}, {b}, {})", self.rng.range(-1, 2))
                } else {
                    format!("{s}.replace({a}, {b})")
                }
            }
            8 => {
                let s = self.expr(&Ty::Str, d);
                let a = self.expr(&Ty::Str, 0);
                let m = self.rng.pick(&["removeprefix", "removesuffix"]);
                format!("{s}.{m}({a})")
            }
            9 => {
                let sep = self.str_lit();
                let l = self.expr(&Ty::list(Ty::Str), d);
                format!("{sep}.join({l})")
            }
            10 | 11 => {
                let t = self.pick_ty(2);
                let x = self.expr(&t, d);
                let f = self.rng.pick(&["str", "repr", "str", "repr", "type"]);
                format!("{f}({x})")
            }
            12 | 13 => self.percent_format(d),
            14 | 15 => self.format_method(d),
            16 => {
                let n = self.rng.range(32, 126);
                if self.rng.chance(50) {
                    format!("chr({n})")
                } else {
                    let i = self.expr(&Ty::Int, d);
                    format!("chr({i} % 95 + 32)")
                }
            }
            17 => {
                let s = self.short_str(d);
                let n = self.rng.range(-1, 3);
                format!("({s} * {n})")
            }
            18 => {
                let l = self.expr(&Ty::list(Ty::Int), d);
                let e = self.fresh("e");
                let sep = self.str_lit();
                format!("{sep}.join([str({e}) for {e} in {l}])")
            }
            19 => {
                let s = self.expr(&Ty::Str, d);
                let sep = self
                    .rng
                    .pick(&["\",\"", "\"-\"", "\" \"", "\"a\"", "\"b\""]);
                let m = self.rng.pick(&["partition", "rpartition"]);
                let i = self.rng.range(0, 2);
                format!("{s}.{m}({sep})[{i}]")
            }
            _ => self.leaf(&Ty::Str),
        }
    }

    pub(super) fn percent_format(&mut self, d: u32) -> String {
        let n = 1 + self.rng.below(3);
        let mut fmt = String::new();
        let mut args = Vec::new();
        for i in 0..n {
            if i > 0 {
                fmt.push_str(self.rng.pick::<&str>(&[" ", "-", "|", ", "]));
            }
            match self.rng.below(9) {
                0 => {
                    fmt.push_str("%s");
                    let t = self.pick_ty(1);
                    args.push(self.expr(&t, d));
                }
                1 => {
                    fmt.push_str("%r");
                    let t = self.pick_ty(1);
                    args.push(self.expr(&t, d));
                }
                2 => {
                    fmt.push_str(self.rng.pick::<&str>(&["%d", "%i"]));
                    let t = if self.rng.chance(85) {
                        Ty::Int
                    } else {
                        Ty::Float
                    };
                    args.push(self.expr(&t, d));
                }
                3 => {
                    fmt.push_str(self.rng.pick::<&str>(&["%x", "%X", "%o"]));
                    args.push(self.expr(&Ty::Int, d));
                }
                4 => {
                    fmt.push_str(self.rng.pick::<&str>(&["%e", "%f", "%g", "%E", "%F", "%G"]));
                    let t = if self.rng.chance(70) {
                        Ty::Float
                    } else {
                        Ty::Int
                    };
                    args.push(self.expr(&t, d));
                }
                5 => {
                    fmt.push_str("%c");
                    if self.rng.chance(50) {
                        args.push(self.rng.range(32, 126).to_string());
                    } else {
                        args.push(self.rng.pick(&["\"a\"", "\"Z\"", "\"%\""]).to_string());
                    }
                }
                6 => fmt.push_str("%%"),
                7 if self.rng.chance(10) => {
                    fmt.push_str(
                        self.rng
                            .pick::<&str>(&["%5d", "%-4d", "%.2f", "%08.3f", "%+d", "%3s"]),
                    );
                    args.push(self.expr(&Ty::Int, d));
                }
                _ => fmt.push_str("lit"),
            }
        }
        let f = self.quote(&fmt);
        if args.len() == 1 && self.rng.chance(50) {
            format!("({f} % {})", args[0])
        } else if args.len() == 1 {
            format!("({f} % ({},))", args[0])
        } else {
            format!("({f} % ({}))", args.join(", "))
        }
    }

    pub(super) fn format_method(&mut self, d: u32) -> String {
        match self.rng.below(4) {
            0 => {
                let a = {
                    let t = self.pick_ty(1);
                    self.expr(&t, d)
                };
                let b = {
                    let t = self.scalar_ty();
                    self.expr(&t, d)
                };
                format!("\"{{}} and {{}}\".format({a}, {b})")
            }
            1 => {
                let a = self.expr(&Ty::Str, d);
                let b = self.expr(&Ty::Int, d);
                format!("\"{{1}}:{{0}}:{{1}}\".format({a}, {b})")
            }
            2 => {
                let a = {
                    let t = self.pick_ty(1);
                    self.expr(&t, d)
                };
                let b = self.expr(&Ty::Str, d);
                format!("\"{{x!r}}/{{y!s}}/{{{{}}}}\".format(x={a}, y={b})")
            }
            _ => {
                let a = self.expr(&Ty::Float, d);
                format!("\"<{{}}>\".format({a})")
            }
        }
    }
}
