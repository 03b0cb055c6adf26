//! Field shapes: the types of capability inputs and outputs, in the
//! notation of the MCP tool reference (`docs/architecture.md`, section 6).
//!
//! A [`Shape`] is what a value may look like (`str`, `int`, `bool`,
//! `float`, `T | None`, `list[T]`, `dict[str, T]`, `{a: T, b?: U}`, and the
//! extension type `any`, a free-form JSON value bound like any other value
//! by depth and bytes) plus the input [`Rule`]s that binding enforces on
//! it. Shapes are never written by hand: they come from JSON Schema
//! ([`crate::schema`]). [`FieldSchema`] is describe's flat
//! `{name, type, required}` entry and [`signature`] the invocation-only
//! signature.

use codemode_vm::Data;
use serde::Serialize;
use std::fmt;

/// What a value may look like.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// The structure of the value.
    pub kind: ShapeKind,
    /// The input rules checked on a value of this shape (never on `None`).
    pub rules: Vec<Rule>,
}

/// The structure of a [`Shape`].
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeKind {
    /// `str`
    Str,
    /// `int` (signed 64-bit)
    Int,
    /// `bool`
    Bool,
    /// `float` (finite)
    Float,
    /// `any`: a free-form JSON value; only manifests may declare it.
    Any,
    /// `T | None`
    Optional(Box<Shape>),
    /// `list[T]`
    List(Box<Shape>),
    /// `dict[str, T]`
    Map(Box<Shape>),
    /// `{a: T, b?: U}`, fields in declaration order.
    Struct(Vec<FieldShape>),
}

/// One field of a struct (or of a capability's input or output root).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldShape {
    /// The wire name of the field.
    pub name: String,
    /// Its shape.
    pub shape: Shape,
    /// Whether the schema lists the field as required (always present).
    pub required: bool,
}

/// A bound on a number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer bound, compared exactly.
    Int(i64),
    /// Any other bound.
    Float(f64),
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Number {
        Number::Int(i)
    }
}

impl From<f64> for Number {
    fn from(x: f64) -> Number {
        Number::Float(x)
    }
}

/// An input rule. Numeric rules apply to numbers, length rules to strings
/// (in characters), lists and dicts (in items), allowed values to scalars.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// `value >= n`
    Minimum(Number),
    /// `value <= n`
    Maximum(Number),
    /// `value > n`
    ExclusiveMinimum(Number),
    /// `value < n`
    ExclusiveMaximum(Number),
    /// At least n characters or items.
    MinLength(u64),
    /// At most n characters or items.
    MaxLength(u64),
    /// One of these values.
    OneOf(Vec<Data>),
}

impl Rule {
    /// `minimum..=maximum` as two rules.
    pub fn range(min: impl Into<Number>, max: impl Into<Number>) -> [Rule; 2] {
        [Rule::Minimum(min.into()), Rule::Maximum(max.into())]
    }

    /// Allowed string values.
    pub fn one_of_str<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Rule {
        Rule::OneOf(values.into_iter().map(|s| Data::Str(s.into())).collect())
    }

    /// The violation text after `<path>: `.
    pub(crate) fn violation(&self) -> String {
        match self {
            Rule::Minimum(n) => format!("must be at least {n}"),
            Rule::Maximum(n) => format!("must be at most {n}"),
            Rule::ExclusiveMinimum(n) => format!("must be greater than {n}"),
            Rule::ExclusiveMaximum(n) => format!("must be less than {n}"),
            Rule::MinLength(n) => format!("length must be at least {n}"),
            Rule::MaxLength(n) => format!("length must be at most {n}"),
            Rule::OneOf(values) => {
                let list: Vec<String> = values.iter().map(|v| v.to_json_string()).collect();
                format!("must be one of {}", list.join(", "))
            }
        }
    }
}

impl Shape {
    /// A shape without rules.
    pub fn new(kind: ShapeKind) -> Shape {
        Shape {
            kind,
            rules: Vec::new(),
        }
    }

    /// `T | None`; a pointer layer appends `| None` once.
    pub fn optional(inner: Shape) -> Shape {
        if inner.is_optional() {
            return inner;
        }
        Shape::new(ShapeKind::Optional(Box::new(inner)))
    }

    /// Whether the shape accepts `None`.
    pub fn is_optional(&self) -> bool {
        matches!(self.kind, ShapeKind::Optional(_))
    }

    /// The shape without its outer `| None`.
    pub fn non_optional(&self) -> &Shape {
        match &self.kind {
            ShapeKind::Optional(inner) => inner,
            _ => self,
        }
    }

    /// The notation, e.g. `list[{title: str, score: float}]`.
    pub fn notation(&self) -> String {
        let mut out = String::new();
        self.render(&mut out);
        out
    }

    fn render(&self, out: &mut String) {
        match &self.kind {
            ShapeKind::Str => out.push_str("str"),
            ShapeKind::Int => out.push_str("int"),
            ShapeKind::Bool => out.push_str("bool"),
            ShapeKind::Float => out.push_str("float"),
            ShapeKind::Any => out.push_str("any"),
            ShapeKind::Optional(inner) => {
                inner.render(out);
                out.push_str(" | None");
            }
            ShapeKind::List(inner) => {
                out.push_str("list[");
                inner.render(out);
                out.push(']');
            }
            ShapeKind::Map(inner) => {
                out.push_str("dict[str, ");
                inner.render(out);
                out.push(']');
            }
            ShapeKind::Struct(fields) => {
                out.push('{');
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&f.name);
                    if f.required {
                        out.push_str(": ");
                        f.shape.render(out);
                    } else {
                        out.push_str("?: ");
                        f.shape.non_optional().render(out);
                    }
                }
                out.push('}');
            }
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.notation())
    }
}

impl FieldShape {
    /// Whether binding lets the field be omitted (or passed `None`).
    pub fn optional_argument(&self) -> bool {
        !self.required || self.shape.is_optional()
    }

    /// Describe's entry for a root input field: an optional argument is
    /// `T | None` with `required: false`, like a Go pointer field.
    pub fn input_schema(&self) -> FieldSchema {
        if self.optional_argument() {
            FieldSchema {
                name: self.name.clone(),
                r#type: Shape::optional(self.shape.clone()).notation(),
                required: false,
            }
        } else {
            FieldSchema {
                name: self.name.clone(),
                r#type: self.shape.notation(),
                required: true,
            }
        }
    }

    /// Describe's entry for a root output field: a field that may be absent
    /// (the analog of an `omitempty` pointer) is `required: false` with the
    /// pointed-to type, without the outer `| None`.
    pub fn output_schema(&self) -> FieldSchema {
        let shape = if self.required {
            &self.shape
        } else {
            self.shape.non_optional()
        };
        FieldSchema {
            name: self.name.clone(),
            r#type: shape.notation(),
            required: self.required,
        }
    }
}

/// One entry of describe's flat `input`/`output` arrays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldSchema {
    /// The field name.
    pub name: String,
    /// The type in the notation.
    #[serde(rename = "type")]
    pub r#type: String,
    /// Whether the field is required.
    pub required: bool,
}

/// The invocation-only signature: `name(*, a: str, b: int | None)` or
/// `name()`.
pub fn signature(name: &str, input: &[FieldShape]) -> String {
    let mut out = String::with_capacity(name.len() + 16 * input.len() + 2);
    out.push_str(name);
    out.push('(');
    if !input.is_empty() {
        out.push('*');
        for f in input {
            let s = f.input_schema();
            out.push_str(", ");
            out.push_str(&s.name);
            out.push_str(": ");
            out.push_str(&s.r#type);
        }
    }
    out.push(')');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(kind: ShapeKind) -> Shape {
        Shape::new(kind)
    }

    fn field(name: &str, shape: Shape, required: bool) -> FieldShape {
        FieldShape {
            name: name.into(),
            shape,
            required,
        }
    }

    #[test]
    fn the_notation_of_every_form() {
        let opt_str = Shape::optional(s(ShapeKind::Str));
        assert_eq!(opt_str.notation(), "str | None");
        // A pointer layer appends `| None` once.
        assert_eq!(Shape::optional(opt_str.clone()).notation(), "str | None");
        let list = s(ShapeKind::List(Box::new(opt_str.clone())));
        assert_eq!(Shape::optional(list).notation(), "list[str | None] | None");
        assert_eq!(
            s(ShapeKind::Map(Box::new(s(ShapeKind::Bool)))).notation(),
            "dict[str, bool]"
        );
        let st = s(ShapeKind::Struct(vec![
            field("value", s(ShapeKind::Str), true),
            field("detail", opt_str.clone(), false),
            field("maybe", Shape::optional(s(ShapeKind::Int)), true),
            field("f", s(ShapeKind::Float), false),
        ]));
        assert_eq!(
            st.notation(),
            "{value: str, detail?: str, maybe: int | None, f?: float}"
        );
        assert_eq!(s(ShapeKind::Struct(vec![])).notation(), "{}");
        assert_eq!(s(ShapeKind::Any).notation(), "any");
    }

    #[test]
    fn root_entries_and_signatures() {
        let fields = vec![
            field("key", s(ShapeKind::Str), true),
            field("limit", Shape::optional(s(ShapeKind::Int)), false),
            field("page", s(ShapeKind::Int), false),
        ];
        assert_eq!(
            signature("records.lookup", &fields),
            "records.lookup(*, key: str, limit: int | None, page: int | None)"
        );
        assert_eq!(signature("records.status", &[]), "records.status()");
        let out: Vec<String> = fields
            .iter()
            .map(|f| serde_json::to_string(&f.output_schema()).unwrap_or_default())
            .collect();
        assert_eq!(
            out,
            [
                r#"{"name":"key","type":"str","required":true}"#,
                r#"{"name":"limit","type":"int","required":false}"#,
                r#"{"name":"page","type":"int","required":false}"#,
            ]
        );
    }
}
