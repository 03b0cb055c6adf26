//! Calls out of the dispatch loops: builtin functions and methods (given
//! the thread, through which they may call back into Starlark), capability
//! calls (checked, converted to host data, sent to the host and their
//! result checked and converted back), and attribute lookups.

use super::Thread;
use crate::builtins::{self, Args, BuiltinFn};
use crate::data::{self, Oversize};
use crate::error::{Error, LimitKind, Result};
use crate::value::*;
use codemode_lang::Hint;

impl<'h> Thread<'h> {
    /// Calls anything that is not a Starlark function.
    pub(super) fn call_native(
        &mut self,
        f: Value<'h>,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        match f {
            Value::Builtin(b) => self.call_builtin(b, None, positional, named),
            Value::BoundMethod(m) => {
                self.call_builtin(m.method, Some(m.receiver), positional, named)
            }
            Value::Capability(c) => self.call_capability(&c.name, positional, named),
            Value::Function(_) => self.call(f, positional, named),
            _ => Err(Error::msg(format!(
                "invalid call of non-function ({})",
                f.type_name()
            ))),
        }
    }

    pub(super) fn call_builtin(
        &mut self,
        b: &'static BuiltinFn,
        recv: Option<Value<'h>>,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        let args = Args {
            recv,
            positional,
            named,
        };
        (b.call)(self, &args)
    }

    /// A capability call: counted, bound to keyword arguments, converted,
    /// sent to the host, and its result checked and converted back.
    pub(super) fn call_capability(
        &mut self,
        name: &'h str,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        if !self.allow_native {
            return Err(Error::msg(format!(
                "capability {name} called during top-level execution; call capabilities only inside main"
            )));
        }
        self.budget.charge_native_call()?;
        if !positional.is_empty() {
            return Err(Error::invalid_arguments(
                "positional arguments are not accepted; pass every argument by keyword",
            ));
        }
        let limits = &self.budget.limits;
        let mut args = Vec::with_capacity(named.len());
        // The arguments' compact JSON length, as one object.
        let mut arg_bytes = data::map_frame_len(named.len());
        for (k, v) in named {
            arg_bytes = arg_bytes.saturating_add(data::json_str_len(k));
            // Each argument gets what the ones before it left of the limit,
            // so the conversion stops as soon as the set is too long.
            let room = limits.max_value_bytes.saturating_sub(arg_bytes);
            let (d, len) = data::to_data(
                *v,
                limits.max_value_depth.saturating_sub(1),
                room,
                self.budget,
            )
            .map_err(|e| e.into_limit_or_args(k))?;
            arg_bytes = arg_bytes.saturating_add(len);
            args.push(((*k).to_string(), d));
        }
        if arg_bytes > limits.max_value_bytes {
            return Err(Error::limit(LimitKind::ValueBytes));
        }
        let result = self.host.call(name, args);
        self.budget.extend_deadline(self.host.take_paused());
        let result = result.map_err(Error::host)?;
        let bytes = match result.measure(limits.max_value_depth, limits.max_value_bytes) {
            Ok(bytes) => bytes,
            Err(Oversize::Depth) => return Err(Error::limit(LimitKind::ValueDepth)),
            Err(Oversize::Bytes) => return Err(Error::limit(LimitKind::ValueBytes)),
        };
        self.budget.charge_intermediate(bytes)?;
        self.budget.check_time()?;
        data::from_data(self.heap, &result)
    }

    /// The attribute `name` of `x`.
    pub fn get_attr(&mut self, x: Value<'h>, name: &str) -> Result<Value<'h>> {
        match x {
            Value::Namespace(ns) => ns.attr(name).ok_or_else(|| {
                Error::msg(format!(
                    "namespace {} has no .{name} field or method",
                    ns.path
                ))
            }),
            Value::Module(m) => {
                builtins::module_attr(m, name).ok_or_else(|| Error::msg(no_attr(x, name)))
            }
            _ => match builtins::method(x, name) {
                Some(m) => Ok(Value::BoundMethod(self.heap.alloc(BoundMethodObj {
                    receiver: x,
                    method: m,
                })?)),
                None if matches!(x, Value::Dict(_)) => {
                    Err(Error::hinted(no_attr(x, name), Hint::DictField))
                }
                None => Err(Error::msg(no_attr(x, name))),
            },
        }
    }
}

/// starlark-go's error for a missing attribute of a value that is not a
/// capability namespace: `TYPE has no .NAME field or method`, with
/// ` (did you mean .OTHER?)` when one of the type's attributes is close.
pub fn no_attr(x: Value<'_>, name: &str) -> String {
    let mut names = builtins::universe::attr_names(x);
    names.sort_unstable();
    match codemode_lang::nearest(name, &names) {
        Some(near) => format!(
            "{} has no .{name} field or method (did you mean .{near}?)",
            x.type_name()
        ),
        None => format!("{} has no .{name} field or method", x.type_name()),
    }
}
