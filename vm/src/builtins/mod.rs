//! Builtin functions, methods and modules.
//!
//! A builtin is a [`BuiltinFn`]: a name and a plain function pointer that
//! receives the running [`Thread`] and the call's [`Args`]. Methods are
//! builtins too, found by receiver type and name ([`method`]); a method
//! value (`x.append`) is a [`crate::value::BoundMethodObj`]. The universe —
//! exactly the top-level names of the language surface (`README.md`,
//! "Language surface") — is [`UNIVERSE`].

/// `method!("name", f)`: the [`BuiltinFn`] entry of a method table (the
/// tables of `dict`, `list` and `string`, declared below, use it).
macro_rules! method {
    ($name:literal, $f:path) => {
        BuiltinFn {
            name: $name,
            call: $f,
        }
    };
}

pub mod args;
pub mod dict;
pub mod format_method;
pub mod json;
pub mod list;
pub mod math;
mod sort_keys;
pub mod string;
pub mod universe;

#[cfg(test)]
mod surface_tests;

use crate::error::{Error, Result};
use crate::interp::Thread;
use crate::value::Value;

impl std::fmt::Debug for BuiltinFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<built-in {}>", self.name)
    }
}

/// A builtin function or method.
pub struct BuiltinFn {
    /// The name starlark-go reports (`len`, `append`, ...).
    pub name: &'static str,
    pub call: for<'h> fn(&mut Thread<'h>, &Args<'h, '_>) -> Result<Value<'h>>,
}

/// The error of a `kind` method called on `v`, another kind of value
/// (which the interpreter never does: it binds methods by kind).
#[cold]
#[inline(never)]
fn receiver_error(kind: &str, v: Value<'_>) -> Error {
    Error::msg(format!("{kind} method on {}", v.type_name()))
}

/// A built-in module value (`json`, `math`): named members.
pub struct ModuleDef {
    pub name: &'static str,
    /// Members in sorted order.
    pub members: &'static [(&'static str, ModuleMember)],
}

/// A member of a built-in module.
pub enum ModuleMember {
    Function(&'static BuiltinFn),
    Float(f64),
}

/// The arguments of one builtin call.
pub struct Args<'h, 'a> {
    /// The receiver of a method call.
    pub recv: Option<Value<'h>>,
    pub positional: &'a [Value<'h>],
    pub named: &'a [(&'h str, Value<'h>)],
}

impl<'h> Args<'h, '_> {
    /// The receiver of a method call (always present for methods).
    pub fn recv(&self) -> Value<'h> {
        self.recv.unwrap_or(Value::None)
    }

    /// Fails unless the call has no keyword arguments.
    pub fn no_named(&self, name: &str) -> Result<()> {
        match self.named.first() {
            None => Ok(()),
            Some((k, _)) => Err(Error::msg(format!(
                "{name}: unexpected keyword argument {k}"
            ))),
        }
    }
}

/// Defines the universe from one list of names and values, so that the
/// two can never disagree: [`UNIVERSE_NAMES`] (what the resolver sees) and
/// [`universe`] (what the compiler loads, in the same order).
macro_rules! universe {
    ($($name:literal => $value:expr,)*) => {
        /// The universe's names: exactly the top level of the language
        /// surface (`README.md`, "Language surface").
        pub const UNIVERSE_NAMES: &[&str] = &[$($name),*];

        /// The names of the universe, in a fixed order, and their values
        /// (same order). The resolver receives the names; the compiler the
        /// values.
        pub fn universe<'h>() -> (&'static [&'static str], [Value<'h>; UNIVERSE_NAMES.len()]) {
            (UNIVERSE_NAMES, [$($value),*])
        }
    };
}

universe! {
    "False" => Value::Bool(false),
    "None" => Value::None,
    "True" => Value::Bool(true),
    "abs" => Value::Builtin(&universe::ABS),
    "all" => Value::Builtin(&universe::ALL),
    "any" => Value::Builtin(&universe::ANY),
    "bool" => Value::Builtin(&universe::BOOL),
    "bytes" => Value::Builtin(&universe::BYTES),
    "chr" => Value::Builtin(&universe::CHR),
    "dict" => Value::Builtin(&universe::DICT),
    "dir" => Value::Builtin(&universe::DIR),
    "enumerate" => Value::Builtin(&universe::ENUMERATE),
    "fail" => Value::Builtin(&universe::FAIL),
    "float" => Value::Builtin(&universe::FLOAT),
    "getattr" => Value::Builtin(&universe::GETATTR),
    "hasattr" => Value::Builtin(&universe::HASATTR),
    "hash" => Value::Builtin(&universe::HASH),
    "int" => Value::Builtin(&universe::INT),
    "json" => Value::Module(&json::MODULE),
    "len" => Value::Builtin(&universe::LEN),
    "list" => Value::Builtin(&universe::LIST),
    "math" => Value::Module(&math::MODULE),
    "max" => Value::Builtin(&universe::MAX),
    "min" => Value::Builtin(&universe::MIN),
    "ord" => Value::Builtin(&universe::ORD),
    "print" => Value::Builtin(&universe::PRINT),
    "range" => Value::Builtin(&universe::RANGE),
    "repr" => Value::Builtin(&universe::REPR),
    "reversed" => Value::Builtin(&universe::REVERSED),
    "sorted" => Value::Builtin(&universe::SORTED),
    "str" => Value::Builtin(&universe::STR),
    "sum" => Value::Builtin(&universe::SUM),
    "tuple" => Value::Builtin(&universe::TUPLE),
    "type" => Value::Builtin(&universe::TYPE),
    "zip" => Value::Builtin(&universe::ZIP),
}

/// The methods of values like `v`, sorted by name (empty for types
/// without methods).
pub fn methods_of(v: Value<'_>) -> &'static [BuiltinFn] {
    match v {
        Value::Str(_) => string::METHODS,
        Value::Bytes(_) => string::BYTES_METHODS,
        Value::List(_) => list::METHODS,
        Value::Dict(_) => dict::METHODS,
        _ => &[],
    }
}

/// The method `name` of values like `v`, if there is one.
///
/// Every method is a leaf: it never runs Starlark code and never touches
/// the thread's frames or value stack (the fast path relies on this to
/// pass a method its arguments in place; a debug build checks it on every
/// call). A method that must call back into Starlark has to take the
/// general call path instead.
pub fn method(v: Value<'_>, name: &str) -> Option<&'static BuiltinFn> {
    let methods = methods_of(v);
    methods
        .binary_search_by(|b| b.name.cmp(name))
        .ok()
        .map(|i| &methods[i])
}

/// The member `name` of a built-in module.
pub fn module_attr<'h>(m: &'static ModuleDef, name: &str) -> Option<Value<'h>> {
    let i = m.members.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
    Some(match &m.members[i].1 {
        ModuleMember::Function(f) => Value::Builtin(f),
        ModuleMember::Float(x) => Value::Float(*x),
    })
}
