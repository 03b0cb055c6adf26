//! Statements that are wrong on purpose (`--errors`, 1% by default): an
//! operator, builtin, method, index or `%`/`format` applied to operands of
//! random types, or a known failure (a missing key, an index out of range,
//! a division by zero, a frozen global mutated, a call with too many
//! arguments). Both interpreters must then fail with the same message at
//! the same position.

use super::types::Ty;
use super::Gen;

impl Gen {
    /// An operation on operands of random types: mostly a type error whose
    /// message both sides must spell alike, sometimes a valid mix.
    pub(super) fn ill_typed(&mut self) -> String {
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
    pub(super) fn error_stmt(&mut self) {
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
