//! Literals of every type: string literals from pools of ASCII strings
//! (quotes, backslashes, control characters, so that `repr` escaping is
//! compared) and non-ASCII ones (`--unicode`), quoted either way; small,
//! large (beyond 64 bits) and hexadecimal/octal/binary ints; floats at the
//! edges of their formatting; and displays of literals for containers.

use super::types::Ty;
use super::Gen;

pub(super) const ASCII: &[&str] = &[
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
pub(super) const UNICODE: &[&str] = &["é", "héllo", "日本語", "😀x", "ß", "Ωmega", "naïve", "ab€"];
pub(super) const FLOATS: &[&str] = &[
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
pub(super) const BIG: &[&str] = &[
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

impl Gen {
    pub(super) fn quote(&mut self, s: &str) -> String {
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

    pub(super) fn str_lit(&mut self) -> String {
        let s = if self.opts.unicode_pct > 0 && self.rng.chance(self.opts.unicode_pct) {
            *self.rng.pick(UNICODE)
        } else {
            *self.rng.pick(ASCII)
        };
        self.quote(s)
    }

    pub(super) fn int_lit(&mut self) -> String {
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

    pub(super) fn literal(&mut self, ty: &Ty) -> String {
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
}
