//! The program generator: a well-typed random program of the codemode
//! dialect, a pure function of a seed.
//!
//! Generation is type-directed. Every variable in scope has a static type
//! (int, float, bool, string, None, a homogeneous list, a tuple, a dict
//! with string or int keys, a record — a dict display with fixed string
//! fields — or a function signature), and every expression is produced for
//! a wanted type from productions that yield it: literals, variables,
//! operators, builtins, methods, comprehensions, lambdas and calls of the
//! program's own functions. So almost every program runs to its end and
//! returns a list of observations (`out.append(repr(x))`) that compares
//! many intermediate values; a small weight of statements is wrong on
//! purpose (a missing key, an index out of range, an operand of the wrong
//! type, a division by zero), and then both interpreters must fail with the
//! same message.
//!
//! Sizes stay bounded so that a program never approaches codemode's
//! budgets: loops run over at most a few items, concatenations add a short
//! operand, repetitions repeat a literal, and self-nesting rebuilds
//! (`x = [x, x]`) happen only outside loops and up to a small depth. Types
//! change only by assignments at the top level of a function body; inside
//! an `if` or a loop an assignment keeps the variable's type and names
//! first bound there go out of the generator's scope at the block's end.

use crate::rng::Rng;

/// Knobs of the generator.
#[derive(Clone, Debug)]
pub struct Options {
    /// Percent of string literals drawn from a pool of non-ASCII strings.
    pub unicode_pct: u32,
    /// Percent of statements that are wrong on purpose.
    pub error_pct: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            unicode_pct: 0,
            error_pct: 1,
        }
    }
}

#[derive(Clone, PartialEq, Debug)]
enum Ty {
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
    fn list(t: Ty) -> Ty {
        Ty::List(Box::new(t))
    }
    fn dict(k: Ty, v: Ty) -> Ty {
        Ty::Dict(Box::new(k), Box::new(v))
    }
    /// Nesting depth of containers.
    fn depth(&self) -> u32 {
        match self {
            Ty::List(t) => 1 + t.depth(),
            Ty::Tuple(ts) => 1 + ts.iter().map(Ty::depth).max().unwrap_or(0),
            Ty::Dict(_, v) => 1 + v.depth(),
            Ty::Rec(fs) => 1 + fs.iter().map(|f| f.1.depth()).max().unwrap_or(0),
            _ => 0,
        }
    }
    /// Values of this type can be ordered with `<`.
    fn orderable(&self) -> bool {
        match self {
            Ty::Int | Ty::Float | Ty::Str | Ty::Bool => true,
            Ty::List(t) => t.orderable(),
            Ty::Tuple(ts) => ts.iter().all(Ty::orderable),
            _ => false,
        }
    }
    /// main may return values of this type directly (JSON-convertible and
    /// small ints only).
    fn json_safe(&self) -> bool {
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
struct Sig {
    params: Vec<(String, Ty)>,
    /// Literal defaults of the last parameters.
    defaults: Vec<String>,
    ret: Ty,
}

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

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    /// Function nesting level that binds it (0: module globals).
    level: usize,
    /// Read by a closure: its type must not change any more.
    pinned: bool,
}

const FIELDS: &[&str] = &["id", "name", "n", "tags", "score"];

const ASCII: &[&str] = &[
    "",
    "ctl\x01\x1f",
    "a\rb",
    "\x7fdel",
    "esc\x1b[0m",
    "q'\"q",
    "a",
    "b",
    "abc",
    "Hello World",
    "x,y,z",
    "  pad  ",
    "a-b-c",
    "42",
    "-7",
    "3.5",
    "foo bar baz",
    "A",
    "line1\nline2",
    "tab\there",
    "it's",
    "say \"hi\"",
    "%",
    "{}",
    "aAbB",
    "0x1f",
    "abcabc",
    "ab",
    "z",
    "ID",
    "k",
    "key",
    "Title Case",
    "UPPER",
    "lower",
    "12ab",
    "a b",
    ",",
    "-",
    " ",
    "x.y",
    "back\\slash",
];
const UNICODE: &[&str] = &["é", "héllo", "日本語", "😀x", "ß", "Ωmega", "naïve", "ab€"];
const FLOATS: &[&str] = &[
    "1e16",
    "1e-5",
    "123456789.0",
    "1.7976931348623157e308",
    "5e-324",
    "1e21",
    "1e22",
    "0.30000000000000004",
    "2.5e+20",
    "-1e-10",
    "4.35",
    "0.5",
    "1.5",
    "-2.25",
    "3.0",
    "1e10",
    "2.5e-3",
    "0.1",
    "100.0",
    "1e100",
    "-0.0",
    "7.25",
    "0.0",
    "123456.789",
    "1e-7",
    "2.0",
];
const BIG: &[&str] = &[
    "12345678901234567890123",
    "-98765432109876543210",
    "0x7fffffffffffffff",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "340282366920938463463374607431768211457",
    "4294967296",
    "0xffffffffffffffffff",
];

pub struct Gen {
    rng: Rng,
    opts: Options,
    lines: Vec<String>,
    indent: usize,
    sigs: Vec<Sig>,
    /// Top-level functions by name and signature index.
    helpers: Vec<(String, usize)>,
    vars: Vec<Var>,
    /// Current function nesting level (1: a top-level def).
    level: usize,
    /// Block nesting inside the current function (0: its body).
    block: usize,
    loop_depth: usize,
    /// Inside main (where `out` exists).
    in_main: bool,
    counter: usize,
}

/// The program for `seed`.
pub fn generate(seed: u64, opts: &Options) -> String {
    let mut g = Gen {
        rng: Rng::new(seed),
        opts: opts.clone(),
        lines: Vec::new(),
        indent: 0,
        sigs: Vec::new(),
        helpers: Vec::new(),
        vars: Vec::new(),
        level: 0,
        block: 0,
        loop_depth: 0,
        in_main: false,
        counter: 0,
    };
    g.program();
    let mut s = g.lines.join("\n");
    s.push('\n');
    s
}

impl Gen {
    fn fresh(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}{}", self.counter)
    }

    fn emit(&mut self, line: impl AsRef<str>) {
        let mut s = "    ".repeat(self.indent);
        s.push_str(line.as_ref());
        self.lines.push(s);
    }

    fn program(&mut self) {
        // Frozen globals.
        for _ in 0..self.rng.below(3) {
            let ty = self.pick_ty(2);
            let e = self.literal(&ty);
            let name = self.fresh("G");
            self.emit(format!("{name} = {e}"));
            self.vars.push(Var {
                name,
                ty,
                level: 0,
                pinned: true,
            });
        }
        for _ in 0..self.rng.below(4) {
            self.helper();
        }
        self.emit("def main():");
        self.indent = 1;
        self.level = 1;
        self.in_main = true;
        self.emit("out = []");
        let n = 4 + self.rng.below(18);
        for _ in 0..n {
            self.stmt();
        }
        // Final observations of what is in scope.
        let names: Vec<(String, Ty)> = self
            .vars
            .iter()
            .filter(|v| v.level == 1)
            .map(|v| (v.name.clone(), v.ty.clone()))
            .collect();
        for (name, ty) in names.iter().rev().take(4) {
            let o = self.observe_expr(name, ty);
            self.emit(format!("out.append({o})"));
        }
        self.emit("return out");
        self.indent = 0;
    }

    // ----- types -----

    fn pick_ty(&mut self, depth: u32) -> Ty {
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

    fn key_ty(&mut self) -> Ty {
        if self.rng.chance(65) {
            Ty::Str
        } else {
            Ty::Int
        }
    }

    fn scalar_ty(&mut self) -> Ty {
        match self.rng.weighted(&[40, 10, 8, 40]) {
            0 => Ty::Int,
            1 => Ty::Float,
            2 => Ty::Bool,
            _ => Ty::Str,
        }
    }

    fn orderable_ty(&mut self) -> Ty {
        match self.rng.weighted(&[40, 12, 40, 5]) {
            0 => Ty::Int,
            1 => Ty::Float,
            2 => Ty::Str,
            _ => Ty::list(Ty::Int),
        }
    }

    // ----- variables -----

    fn vars_of(&self, ty: &Ty) -> Vec<usize> {
        self.vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.ty == *ty && (v.level == 0 || v.level <= self.level))
            .map(|(i, _)| i)
            .collect()
    }

    /// Reads variable `i`: a read from an enclosing function pins it.
    fn read(&mut self, i: usize) -> String {
        let v = &mut self.vars[i];
        if v.level != 0 && v.level < self.level {
            v.pinned = true;
        }
        v.name.clone()
    }

    fn var_of(&mut self, ty: &Ty) -> Option<String> {
        let c = self.vars_of(ty);
        if c.is_empty() {
            return None;
        }
        let i = *self.rng.pick(&c);
        Some(self.read(i))
    }

    /// A variable of the current function that may be mutated (not a
    /// frozen global, not a closure's).
    fn own_var(&mut self, pred: impl Fn(&Ty) -> bool) -> Option<(usize, String, Ty)> {
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
    fn any_var(&mut self) -> Option<(String, Ty)> {
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
    fn bind(&mut self, name: &str, ty: Ty) {
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

    // ----- literals -----

    fn quote(&mut self, s: &str) -> String {
        let single = self.rng.chance(15) && !s.contains('\'');
        let q = if single { '\'' } else { '"' };
        let mut out = String::new();
        out.push(q);
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c == q => {
                    out.push('\\');
                    out.push(c);
                }
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                c => out.push(c),
            }
        }
        out.push(q);
        out
    }

    fn str_lit(&mut self) -> String {
        let s = if self.opts.unicode_pct > 0 && self.rng.chance(self.opts.unicode_pct) {
            *self.rng.pick(UNICODE)
        } else {
            *self.rng.pick(ASCII)
        };
        self.quote(s)
    }

    fn int_lit(&mut self) -> String {
        match self.rng.weighted(&[60, 6, 10, 7, 5]) {
            0 => {
                let n = self.rng.range(-5, 20);
                if n < 0 {
                    format!("({n})")
                } else {
                    n.to_string()
                }
            }
            1 => "0".into(),
            2 => self.rng.range(100, 100_000).to_string(),
            3 => {
                let b = *self.rng.pick(BIG);
                if b.starts_with('-') {
                    format!("({b})")
                } else {
                    b.to_string()
                }
            }
            _ => {
                let n = self.rng.range(0, 300);
                match self.rng.below(3) {
                    0 => format!("{n:#x}"),
                    1 => format!("0o{n:o}"),
                    _ => format!("{n:#b}"),
                }
            }
        }
    }

    fn literal(&mut self, ty: &Ty) -> String {
        match ty {
            Ty::Int => self.int_lit(),
            Ty::Float => {
                let f = *self.rng.pick(FLOATS);
                if f.starts_with('-') {
                    format!("({f})")
                } else {
                    f.to_string()
                }
            }
            Ty::Bool => if self.rng.chance(50) { "True" } else { "False" }.into(),
            Ty::Str => self.str_lit(),
            Ty::NoneT => "None".into(),
            Ty::List(t) => {
                let n = self.rng.below(4);
                let items: Vec<String> = (0..n).map(|_| self.literal(t)).collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Tuple(ts) => {
                let items: Vec<String> = ts.iter().map(|t| self.literal(t)).collect();
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            }
            Ty::Dict(k, v) => {
                let n = self.rng.below(4);
                let items: Vec<String> = (0..n)
                    .map(|_| format!("{}: {}", self.literal(k), self.literal(v)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Ty::Rec(fs) => {
                let items: Vec<String> = fs
                    .iter()
                    .map(|(f, t)| format!("\"{f}\": {}", self.literal(t)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Ty::Func(i) => self.lambda(*i, 1),
        }
    }

    // ----- expressions -----

    fn leaf(&mut self, ty: &Ty) -> String {
        if self.rng.chance(70) {
            if let Some(v) = self.var_of(ty) {
                return v;
            }
        }
        self.literal(ty)
    }

    /// An expression of type `ty`.
    fn expr(&mut self, ty: &Ty, depth: u32) -> String {
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

    fn int_expr(&mut self, d: u32) -> String {
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

    fn float_expr(&mut self, d: u32) -> String {
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

    fn bool_expr(&mut self, d: u32) -> String {
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

    /// A short string operand (a literal or a prefix), so that repeated
    /// concatenation grows linearly.
    fn short_str(&mut self, d: u32) -> String {
        if self.rng.chance(50) {
            self.str_lit()
        } else {
            let s = self.expr(&Ty::Str, d);
            format!("{s}[:{}]", self.rng.range(0, 4))
        }
    }

    fn index_expr(&mut self) -> String {
        match self.rng.below(4) {
            0 => String::new(),
            1 => self.rng.range(-6, 6).to_string(),
            2 => self.rng.range(0, 3).to_string(),
            _ => format!("({})", self.rng.range(-3, -1)),
        }
    }

    fn slice(&mut self) -> String {
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

    fn str_expr(&mut self, d: u32) -> String {
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

    fn percent_format(&mut self, d: u32) -> String {
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

    fn format_method(&mut self, d: u32) -> String {
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

    /// An iteration source with an element type: `(source, elem, is_pair)`
    /// where a pair source binds two names (`k, v`).
    fn iter_source(&mut self, d: u32, bounded: bool) -> (String, Vec<Ty>) {
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

    /// Binds comprehension or loop names for `elems`; returns the target
    /// text. The caller pops the bindings.
    fn bind_targets(&mut self, elems: &[Ty]) -> String {
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

    fn comprehension_clauses(&mut self, d: u32) -> (String, usize) {
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

    fn pop_vars(&mut self, n: usize) {
        let len = self.vars.len();
        self.vars.truncate(len - n);
    }

    fn list_expr(&mut self, t: &Ty, d: u32) -> String {
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
    fn key_fn(&mut self, t: &Ty, e: &str, _d: u32) -> String {
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

    fn tuple_expr(&mut self, ts: &[Ty], d: u32) -> String {
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

    fn dict_expr(&mut self, k: &Ty, v: &Ty, d: u32) -> String {
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

    fn rec_expr(&mut self, fs: &[(&'static str, Ty)], d: u32) -> String {
        let items: Vec<String> = fs
            .iter()
            .map(|(f, t)| format!("\"{f}\": {}", self.expr(t, d)))
            .collect();
        format!("{{{}}}", items.join(", "))
    }

    fn container_or_str(&mut self, t: &Ty, d: u32) -> String {
        match t {
            Ty::Str | Ty::List(_) | Ty::Dict(..) | Ty::Tuple(_) | Ty::Rec(_) => self.expr(t, d),
            _ => self.expr(&Ty::Str, d),
        }
    }

    /// A lambda of signature `i`.
    fn lambda(&mut self, i: usize, d: u32) -> String {
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

    fn new_sig(&mut self, max_params: usize) -> usize {
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

    /// Arguments for a call of signature `i`.
    fn args(&mut self, i: usize, d: u32) -> String {
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
    fn call_returning(&mut self, ty: &Ty, d: u32) -> Option<String> {
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

    // ----- statements -----

    /// What main appends to `out` to observe `name` of type `ty`.
    fn observe_expr(&mut self, name: &str, ty: &Ty) -> String {
        match self.rng.below(6) {
            0 if ty.json_safe() => name.to_string(),
            1 if *ty == Ty::Float => format!("str({name})"),
            2 => format!("str({name})"),
            3 => format!("[type({name}), len(repr({name}))]"),
            _ => format!("repr({name})"),
        }
    }

    fn helper(&mut self) {
        let s = self.new_sig(3);
        let name = self.fresh("helper");
        let sig = self.sigs[s].clone();
        self.emit(format!("def {name}({}):", param_list(&sig)));
        let n = 1 + self.rng.below(5);
        self.function_body(&sig, n);
        self.helpers.push((name, s));
    }

    /// The body of a def at `self.level + 1` with the parameters of `sig`.
    fn function_body(&mut self, sig: &Sig, n: usize) {
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

    /// Runs `f` as a block: bindings made inside are dropped after it.
    fn block(&mut self, f: impl FnOnce(&mut Gen)) {
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

    fn stmt(&mut self) {
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

    fn assign_new(&mut self) {
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

    fn reassign(&mut self) {
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

    fn observe(&mut self) {
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
    fn rebuild(&mut self) {
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

    fn swap_or_unpack(&mut self) {
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

    fn augmented(&mut self) {
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

    fn mutate(&mut self) {
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

    fn if_stmt(&mut self) {
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

    fn for_stmt(&mut self) {
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

    fn nested_def(&mut self) {
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

    fn lambda_var(&mut self) {
        let s = self.new_sig(2);
        let l = self.lambda(s, 2);
        let name = self.fresh("f");
        self.emit(format!("{name} = {l}"));
        self.bind(&name, Ty::Func(s));
        let i = self.vars.len() - 1;
        self.vars[i].pinned = true;
    }

    /// An operation on operands of random types: mostly a type error whose
    /// message both sides must spell alike, sometimes a valid mix.
    fn ill_typed(&mut self) -> String {
        let ta = self.pick_ty(1);
        let tb = self.pick_ty(1);
        let a = self.expr(&ta, 1);
        let b = self.expr(&tb, 1);
        match self.rng.below(8) {
            0 | 1 => {
                let op = self.rng.pick(&[
                    "+", "-", "/", "//", "%", "<", "<=", ">", "==", "!=", "in", "not in", "|", "&",
                    "^", ">>", "and", "or",
                ]);
                format!("({a} {op} {b})")
            }
            2 => {
                let op = self.rng.pick(&["-", "+", "~", "not "]);
                format!("({op}{a})")
            }
            3 | 4 => {
                let f = *self.rng.pick(&[
                    "len",
                    "int",
                    "float",
                    "str",
                    "bool",
                    "abs",
                    "sorted",
                    "reversed",
                    "list",
                    "tuple",
                    "dict",
                    "hash",
                    "ord",
                    "chr",
                    "min",
                    "max",
                    "enumerate",
                    "zip",
                    "range",
                    "repr",
                    "type",
                    "all",
                    "any",
                    "dir",
                    "print",
                ]);
                match self.rng.below(4) {
                    0 => format!("{f}({a}, {b})"),
                    1 => format!("{f}()"),
                    _ => format!("{f}({a})"),
                }
            }
            5 => {
                let recv = format!("({})", self.literal(&ta));
                let m = *self.rng.pick(&[
                    "capitalize",
                    "count",
                    "elems",
                    "endswith",
                    "find",
                    "format",
                    "index",
                    "isalnum",
                    "join",
                    "lower",
                    "lstrip",
                    "partition",
                    "removeprefix",
                    "replace",
                    "rfind",
                    "rsplit",
                    "rstrip",
                    "split",
                    "splitlines",
                    "startswith",
                    "strip",
                    "title",
                    "upper",
                    "codepoints",
                    "elem_ords",
                    "append",
                    "clear",
                    "extend",
                    "insert",
                    "pop",
                    "remove",
                    "get",
                    "items",
                    "keys",
                    "popitem",
                    "setdefault",
                    "update",
                    "values",
                    "nosuch",
                ]);
                match self.rng.below(4) {
                    0 => format!("{recv}.{m}()"),
                    1 => format!("{recv}.{m}({b}, {a})"),
                    2 => format!("{recv}.{m}(x = {b})"),
                    _ => format!("{recv}.{m}({b})"),
                }
            }
            6 => match self.rng.below(4) {
                0 => format!("{a}[{b}]"),
                1 => format!("{a}[{b}:]"),
                2 => format!("{a}[::{b}]"),
                _ => format!("{a}.{}", self.rng.pick(&["x", "upper", "keys", "append"])),
            },
            _ => {
                let f = self.rng.pick(&[
                    "\"%d\"",
                    "\"%s %s\"",
                    "\"%x\"",
                    "\"%c\"",
                    "\"%(k)s\"",
                    "\"%e\"",
                    "\"%\"",
                    "\"%z\"",
                    "\"{}\"",
                    "\"{0} {2}\"",
                    "\"{k}\"",
                    "\"{\"",
                    "\"{!x}\"",
                    "\"}\"",
                ]);
                if f.contains('{') || f.contains('}') {
                    format!("{f}.format({a})")
                } else {
                    format!("({f} % {a})")
                }
            }
        }
    }

    /// A statement that fails on purpose (both interpreters must fail alike).
    fn error_stmt(&mut self) {
        if self.rng.chance(60) {
            let e = self.ill_typed();
            let v = self.fresh("v");
            self.emit(format!("{v} = {e}"));
            return;
        }
        let v = self.fresh("v");
        let list = self
            .var_of(&Ty::list(Ty::Int))
            .unwrap_or_else(|| "[1, 2]".into());
        let dict = self
            .var_of(&Ty::dict(Ty::Str, Ty::Int))
            .unwrap_or_else(|| "{\"a\": 1}".into());
        let s = self.var_of(&Ty::Str).unwrap_or_else(|| "\"abc\"".into());
        let i = self.var_of(&Ty::Int).unwrap_or_else(|| "7".into());
        let e = match self.rng.below(32) {
            0 => format!("{dict}[\"no such key\"]"),
            1 => format!("{list}[len({list}) + 2]"),
            2 => format!("{i} // 0"),
            3 => format!("{i} % 0"),
            4 => "1.5 / 0".into(),
            5 => format!("{s} + {i}"),
            6 => format!("len({i})"),
            7 => "int(\"abc\")".into(),
            8 => "{[]: 1}".into(),
            9 => format!("{list}.remove(123456)"),
            10 => "[].pop()".into(),
            11 => "(1, 2)[2]".into(),
            12 => "\"%d\" % \"s\"".into(),
            13 => "\"{} {}\".format(1)".into(),
            14 => format!("None + {i}"),
            15 => format!("{s}.nosuchmethod()"),
            16 => "range(0, 5, 0)".into(),
            17 => "abs(\"s\")".into(),
            18 => "sorted([1, \"a\"])".into(),
            19 => "float(\"x1\")".into(),
            20 => "chr(-1)".into(),
            21 => "ord(\"ab\")".into(),
            22 => "min([])".into(),
            23 => format!("{s}[1:2:0]"),
            24 => format!("{i} < {s}"),
            25 => format!("{list} * {s}"),
            26 => format!("{dict}.get()"),
            27 => "\"%d %d\" % (1,)".into(),
            28 => format!("{s}.index(\"\\t\\tzz\")"),
            29 => format!("{i} << -1"),
            30 => {
                if let Some((h, s)) = self.helpers.first().cloned() {
                    let n = self.sigs[s].params.len();
                    let args: Vec<String> = (0..n + 1).map(|k| k.to_string()).collect();
                    format!("{h}({})", args.join(", "))
                } else {
                    "len()".into()
                }
            }
            _ => {
                // Mutating a frozen global, or a dict while iterating it.
                let g = self
                    .vars
                    .iter()
                    .find(|v| v.level == 0 && matches!(v.ty, Ty::List(_)))
                    .map(|v| v.name.clone());
                match g {
                    Some(g) => format!("{g}.clear()"),
                    None => format!("[{dict}.pop(k) for k in {dict}]"),
                }
            }
        };
        self.emit(format!("{v} = {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_a_function_of_its_seed() {
        let o = Options::default();
        assert_eq!(generate(42, &o), generate(42, &o));
        assert_ne!(generate(42, &o), generate(43, &o));
    }

    #[test]
    fn programs_are_ascii_unless_asked_and_mostly_run_to_the_end() {
        let o = Options::default();
        let mut ok = 0;
        for seed in 0..300 {
            let p = generate(seed, &o);
            assert!(p.is_ascii(), "seed {seed}");
            assert!(p.contains("def main():"), "seed {seed}");
            if let crate::compare::Outcome::Result(_) = crate::compare::run_codemode(&p) {
                ok += 1;
            }
        }
        // About two thirds succeed (a third fail on purpose or by chance).
        assert!(ok > 150, "{ok} of 300 succeeded");
        let u = Options {
            unicode_pct: 100,
            ..Options::default()
        };
        assert!((0..20).any(|s| !generate(s, &u).is_ascii()));
    }
}
