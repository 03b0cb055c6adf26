//! Builtin functions, methods and modules.
//!
//! A builtin is a [`BuiltinFn`]: a name and a plain function pointer that
//! receives the running [`Thread`] and the call's [`Args`]. Methods are
//! builtins too, found by receiver type and name ([`method`]); a method
//! value (`x.append`) is a [`crate::value::BoundMethodObj`]. The universe —
//! exactly the top-level names of the tool reference — is [`UNIVERSE`].

pub mod args;
pub mod dict;
pub mod format_method;
pub mod json;
pub mod list;
pub mod math;
pub mod string;
pub mod universe;

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

/// The names of the universe, in a fixed order, and their values (same
/// order). The resolver receives the names; the compiler the values.
pub fn universe<'h>() -> (&'static [&'static str], Vec<Value<'h>>) {
    let values = UNIVERSE_NAMES
        .iter()
        .map(|n| universe_value(n).unwrap_or(Value::None))
        .collect();
    (UNIVERSE_NAMES, values)
}

/// The universe's names: exactly the top level of the tool reference.
pub const UNIVERSE_NAMES: &[&str] = &[
    "False",
    "None",
    "True",
    "abs",
    "all",
    "any",
    "bool",
    "bytes",
    "chr",
    "dict",
    "dir",
    "enumerate",
    "fail",
    "float",
    "getattr",
    "hasattr",
    "hash",
    "int",
    "json",
    "len",
    "list",
    "math",
    "max",
    "min",
    "ord",
    "print",
    "range",
    "repr",
    "reversed",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "zip",
];

fn universe_value<'h>(name: &str) -> Option<Value<'h>> {
    use universe as u;
    let f: &'static BuiltinFn = match name {
        "False" => return Some(Value::Bool(false)),
        "None" => return Some(Value::None),
        "True" => return Some(Value::Bool(true)),
        "json" => return Some(Value::Module(&json::MODULE)),
        "math" => return Some(Value::Module(&math::MODULE)),
        "abs" => &u::ABS,
        "all" => &u::ALL,
        "any" => &u::ANY,
        "bool" => &u::BOOL,
        "bytes" => &u::BYTES,
        "chr" => &u::CHR,
        "dict" => &u::DICT,
        "dir" => &u::DIR,
        "enumerate" => &u::ENUMERATE,
        "fail" => &u::FAIL,
        "float" => &u::FLOAT,
        "getattr" => &u::GETATTR,
        "hasattr" => &u::HASATTR,
        "hash" => &u::HASH,
        "int" => &u::INT,
        "len" => &u::LEN,
        "list" => &u::LIST,
        "max" => &u::MAX,
        "min" => &u::MIN,
        "ord" => &u::ORD,
        "print" => &u::PRINT,
        "range" => &u::RANGE,
        "repr" => &u::REPR,
        "reversed" => &u::REVERSED,
        "sorted" => &u::SORTED,
        "str" => &u::STR,
        "sum" => &u::SUM,
        "tuple" => &u::TUPLE,
        "type" => &u::TYPE,
        "zip" => &u::ZIP,
        _ => return None,
    };
    Some(Value::Builtin(f))
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
