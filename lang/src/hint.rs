//! Hints: one short sentence after an error caused by a Python habit.
//!
//! Models write Python. When a program uses a construct this Starlark
//! dialect lacks (`try`, f-strings, `import`, `is`, `**`, `while`, ...) or
//! mixes types the way Python code often does, the error keeps
//! starlark-go's message and gains ` (hint: TEXT)` telling how to write it
//! instead. Every hint is one of the fixed texts of [`Hint`] (at most
//! [`MAX_HINT_BYTES`] bytes, never host text); the parser and resolver pick
//! one from the tokens and syntax they failed on, the VM from the operands
//! of the failing operation. [`without_hint`] gives back starlark-go's
//! message, which is what comparisons with the reference use.

use std::fmt;

/// The longest hint text, in bytes.
pub const MAX_HINT_BYTES: usize = 160;

/// A construct the language lacks, or a Python habit that fails here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hint {
    /// `f"{x}"`.
    FString,
    /// `try`, `except`, `finally`, `raise`.
    Exceptions,
    /// `import x`, `from x import y`, `load(...)`.
    Import,
    /// `x is None`.
    Is,
    /// `2 ** 3`, `x **= 2`.
    Power,
    /// `{**a, **b}`.
    DictUnpack,
    /// `while cond:`.
    While,
    /// `class A:`.
    Class,
    /// `with open(p) as f:`.
    With,
    /// `yield x`.
    Yield,
    /// `async def`, `await f()`.
    Async,
    /// `(n := len(x))`.
    Walrus,
    /// `del d[k]`.
    Del,
    /// `global x`, `nonlocal x`.
    Global,
    /// `{1, 2}`, `{x for x in y}`, `set(...)`.
    Set,
    /// `true`, `false`, `null`, `none`.
    Constants,
    /// `d.key` on a dict.
    DictField,
    /// `"a" + 1`, `"5" < 1`: text mixed with a number.
    Convert,
    /// `[1] + (2,)`: a list mixed with a tuple.
    ConvertSequence,
}

impl Hint {
    /// Every hint.
    pub const ALL: [Hint; 19] = [
        Hint::FString,
        Hint::Exceptions,
        Hint::Import,
        Hint::Is,
        Hint::Power,
        Hint::DictUnpack,
        Hint::While,
        Hint::Class,
        Hint::With,
        Hint::Yield,
        Hint::Async,
        Hint::Walrus,
        Hint::Del,
        Hint::Global,
        Hint::Set,
        Hint::Constants,
        Hint::DictField,
        Hint::Convert,
        Hint::ConvertSequence,
    ];

    /// The text the model reads.
    pub fn text(self) -> &'static str {
        match self {
            Hint::FString => "f-strings do not exist; use \"{}\".format(x) or \"%s\" % x",
            Hint::Exceptions => {
                "there are no exceptions; check conditions first (k in d, d.get(k), len(x)) \
                 and call fail(msg) to stop"
            }
            Hint::Import => {
                "there is nothing to import; json and math are predeclared and capabilities \
                 are called by their dotted names"
            }
            Hint::Is => "there is no is operator; compare with == or != (x == None)",
            Hint::Power => "there is no ** operator; use math.pow(x, y) or multiplication",
            Hint::DictUnpack => "there is no ** in dict displays; merge with a | b or d.update(b)",
            Hint::While => "there are no while loops; use for i in range(n) with break",
            Hint::Class => "there are no classes; use dicts for records and def for functions",
            Hint::With => "there are no with blocks; call functions directly, nothing needs opening or closing",
            Hint::Yield => "there are no generators; append to a list and return it",
            Hint::Async => "there is no async or await; capability calls are plain calls that return their result",
            Hint::Walrus => "there is no := operator; assign on a line of its own first",
            Hint::Del => "there is no del; use d.pop(k), x.remove(v), or build a new dict or list",
            Hint::Global => {
                "there is no global or nonlocal; globals are frozen, so pass values as \
                 arguments and return results"
            }
            Hint::Set => {
                "there are no sets; use a dict with True values ({x: True}) or a list, and test \
                 membership with in"
            },
            Hint::Constants => "the constants are True, False and None",
            Hint::DictField => "dict entries are not fields; use d[\"key\"] or d.get(\"key\")",
            Hint::Convert => "convert first: str(x) to join text, int(x) or float(x) for arithmetic",
            Hint::ConvertSequence => "convert first: list(x) + list(y), or tuple(x) + tuple(y)",
        }
    }

    /// The hint for a Python keyword that starlark-go's scanner reserves
    /// (an "illegal token"), if there is one.
    pub fn for_reserved(word: &str) -> Option<Hint> {
        Some(match word {
            "try" | "except" | "finally" | "raise" => Hint::Exceptions,
            "import" | "from" => Hint::Import,
            "is" => Hint::Is,
            "class" => Hint::Class,
            "with" => Hint::With,
            "yield" => Hint::Yield,
            "del" => Hint::Del,
            "global" | "nonlocal" => Hint::Global,
            _ => return None,
        })
    }
}

impl fmt::Display for Hint {
    /// ` (hint: TEXT)`, the suffix an error message gains.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " (hint: {})", self.text())
    }
}

/// `detail` without the hint it ends with, if it ends with one: the
/// message as starlark-go words it.
pub fn without_hint(detail: &str) -> &str {
    for hint in Hint::ALL {
        let stripped = detail
            .strip_suffix(")")
            .and_then(|d| d.strip_suffix(hint.text()))
            .and_then(|d| d.strip_suffix(" (hint: "));
        if let Some(message) = stripped {
            return message;
        }
    }
    detail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_short_and_distinct() {
        for (i, hint) in Hint::ALL.iter().enumerate() {
            let text = hint.text();
            assert!(
                text.len() <= MAX_HINT_BYTES,
                "{hint:?}: {} bytes",
                text.len()
            );
            assert!(!text.is_empty() && !text.contains('\n'), "{hint:?}");
            assert!(Hint::ALL[..i].iter().all(|h| h.text() != text), "{hint:?}");
        }
    }

    #[test]
    fn without_hint_removes_only_a_known_hint() {
        let message = "<codemode>:2:16: unknown binary op: string + int";
        let detail = format!("{message}{}", Hint::Convert);
        assert_eq!(
            detail,
            "<codemode>:2:16: unknown binary op: string + int (hint: convert first: str(x) to \
             join text, int(x) or float(x) for arithmetic)"
        );
        assert_eq!(without_hint(&detail), message);
        assert_eq!(without_hint(message), message);
        let other = "<codemode>:1:1: fail: x (hint: something else)";
        assert_eq!(without_hint(other), other);
    }
}
