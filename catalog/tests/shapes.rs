//! Field shapes derived from Rust types and from JSON Schema, pinned to the
//! notation of `docs/architecture.md` (section 6), describe arrays and
//! signatures.

use codemode_catalog::{
    Capability, Catalog, FieldSchema, HandlerError, NoInput, Problem, ShapeError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};

fn entry(name: &str, ty: &str, required: bool) -> FieldSchema {
    FieldSchema {
        name: name.into(),
        r#type: ty.into(),
        required,
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct LookupInput {
    key: String,
    limit: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
struct LookupOutput {
    records: Vec<String>,
}

async fn lookup(_: LookupInput) -> Result<LookupOutput, HandlerError> {
    Ok(LookupOutput { records: vec![] })
}

#[derive(Serialize, JsonSchema)]
struct Item {
    title: String,
    score: f64,
}

#[derive(Serialize, JsonSchema)]
struct Nested {
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

/// The reference's sample output array.
#[derive(Serialize, JsonSchema)]
struct SampleOutput {
    items: Vec<Item>,
    alias: HashMap<String, bool>,
    nested: Nested,
    values: Option<Vec<Option<String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Status {}

fn one(cap: Capability) -> Catalog {
    Catalog::builder().capability(cap).build().unwrap()
}

#[test]
fn the_records_lookup_signature_is_byte_exact() {
    let catalog =
        one(Capability::new("records.lookup", lookup).summary("Look up one record by key."));
    let d = catalog.describe("records.lookup").unwrap();
    assert_eq!(
        d.signature,
        "records.lookup(*, key: str, limit: int | None)"
    );
    assert_eq!(
        d.input,
        vec![
            entry("key", "str", true),
            entry("limit", "int | None", false)
        ]
    );
    assert_eq!(d.output, vec![entry("records", "list[str]", true)]);
}

#[test]
fn a_capability_without_input_has_an_empty_signature() {
    let cat = one(
        Capability::new("records.status", |_: NoInput| async { Ok(Status {}) }).summary("Status."),
    );
    let d = cat.describe("records.status").unwrap();
    assert_eq!(d.signature, "records.status()");
    assert!(d.input.is_empty() && d.output.is_empty());
    assert_eq!(
        serde_json::to_string(&d).unwrap(),
        r#"{"name":"records.status","signature":"records.status()","summary":"Status.","description":"","input":[],"output":[]}"#
    );
    let unit = one(Capability::new("records.unit", |_: ()| async { Ok(Status {}) }).summary("U."));
    assert_eq!(
        unit.describe("records.unit").unwrap().signature,
        "records.unit()"
    );
}

#[test]
fn the_sample_output_array_is_byte_exact() {
    let cat = one(Capability::new("sample.out", |_: NoInput| async {
        Ok(SampleOutput {
            items: vec![],
            alias: HashMap::new(),
            nested: Nested {
                value: String::new(),
                detail: None,
            },
            values: None,
            extra: None,
        })
    })
    .summary("Sample."));
    let d = cat.describe("sample.out").unwrap();
    let expected = json!([
      {"name": "items", "type": "list[{title: str, score: float}]", "required": true},
      {"name": "alias", "type": "dict[str, bool]", "required": true},
      {"name": "nested", "type": "{value: str, detail?: str}", "required": true},
      {"name": "values", "type": "list[str | None] | None", "required": true},
      {"name": "extra", "type": "str", "required": false}
    ]);
    assert_eq!(serde_json::to_value(&d.output).unwrap(), expected);
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Filter {
    owner: String,
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum State {
    Open,
    Closed,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Rich {
    name: String,
    count: u32,
    big: u64,
    small: i8,
    ratio: f32,
    flag: bool,
    tags: Vec<String>,
    bytes: Vec<u8>,
    labels: BTreeMap<String, i64>,
    filter: Filter,
    maybe: Option<Filter>,
    state: State,
    #[serde(rename = "renamed")]
    original: String,
    #[serde(default)]
    defaulted: i64,
    nested_lists: Vec<Vec<Option<f64>>>,
}

#[test]
fn every_type_form_renders_in_the_notation() {
    let cat = one(Capability::new("rich.all", |_: Rich| async { Ok(Status {}) }).summary("R."));
    let d = cat.describe("rich.all").unwrap();
    let got: Vec<(String, String, bool)> = d
        .input
        .into_iter()
        .map(|f| (f.name, f.r#type, f.required))
        .collect();
    let want = [
        ("name", "str", true),
        ("count", "int", true),
        ("big", "int", true),
        ("small", "int", true),
        ("ratio", "float", true),
        ("flag", "bool", true),
        ("tags", "list[str]", true),
        ("bytes", "list[int]", true),
        ("labels", "dict[str, int]", true),
        ("filter", "{owner: str, label?: str}", true),
        ("maybe", "{owner: str, label?: str} | None", false),
        ("state", "str", true),
        ("renamed", "str", true),
        ("defaulted", "int | None", false),
        ("nested_lists", "list[list[float | None]]", true),
    ];
    let want: Vec<(String, String, bool)> = want
        .iter()
        .map(|(n, t, r)| (n.to_string(), t.to_string(), *r))
        .collect();
    assert_eq!(got, want);
}

fn shape_error(cap: Capability) -> (String, ShapeError) {
    let err = Catalog::builder().capability(cap).build().unwrap_err();
    match err.problems.as_slice() {
        [Problem::Shape { which, error, .. }] => (which.to_string(), error.clone()),
        other => panic!("unexpected problems {other:?}"),
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(untagged)]
enum Untagged {
    A(String),
    B(i64),
}

#[derive(Deserialize, JsonSchema)]
struct WithUntagged {
    #[allow(dead_code)]
    u: Untagged,
}

#[derive(Serialize, JsonSchema)]
struct Recursive {
    next: Option<Box<Recursive>>,
}

#[derive(Serialize, JsonSchema)]
struct IntKeys {
    m: BTreeMap<i32, String>,
}

#[derive(Serialize, JsonSchema)]
struct Flattened {
    a: String,
    #[serde(flatten)]
    rest: HashMap<String, String>,
}

#[derive(Serialize, JsonSchema)]
struct FreeForm {
    v: serde_json::Value,
}

#[derive(Serialize, JsonSchema)]
struct Tuple {
    t: (i64, String),
}

#[derive(Serialize, JsonSchema)]
#[allow(dead_code)]
enum Tagged {
    A { x: i64 },
    B(String),
}

#[derive(Serialize, JsonSchema)]
struct WithTagged {
    t: Tagged,
}

fn out<O: Serialize + JsonSchema + 'static>() -> Capability {
    Capability::new("bad.shape", |_: NoInput| async {
        Err::<O, _>(HandlerError::internal("x"))
    })
    .summary("Bad.")
}

#[test]
fn inexpressible_types_are_refused_with_the_field_named() {
    let input =
        Capability::new("bad.shape", |_: WithUntagged| async { Ok(Status {}) }).summary("B.");
    assert_eq!(
        shape_error(input),
        (
            "input".into(),
            ShapeError {
                path: "u".into(),
                reason: "union types other than T | None are not supported".into()
            }
        )
    );
    let cases = [
        (
            shape_error(out::<Recursive>()),
            "next",
            "recursive types are not supported",
        ),
        (shape_error(out::<IntKeys>()), "m", "maps need string keys"),
        (
            shape_error(out::<Flattened>()),
            "",
            "a struct with additional properties (named fields and map entries) is not supported",
        ),
        (
            shape_error(out::<FreeForm>()),
            "v",
            "free-form values (any type) are not supported",
        ),
        (shape_error(out::<Tuple>()), "t", "tuples are not supported"),
        (
            shape_error(out::<WithTagged>()),
            "t",
            "union types other than T | None are not supported",
        ),
    ];
    for ((which, e), path, reason) in cases {
        assert_eq!(which, "output");
        assert_eq!((e.path.as_str(), e.reason.as_str()), (path, reason));
    }
    let scalar_root = Capability::new("bad.shape", |_: NoInput| async { Ok(1i64) }).summary("S.");
    assert_eq!(
        shape_error(scalar_root).1.reason,
        "the root must be an object with named fields, not int"
    );
}

#[test]
fn manifest_schemas_map_to_the_same_shapes() {
    let cap = Capability::from_schemas(
        "repo.issues.list",
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "state": {"type": "string", "enum": ["open", "closed", "all"]},
                "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
                "labels": {"type": "array", "items": {"type": "string"}},
                "since": {"type": ["string", "null"]},
                "extra": {"type": "object"},
                "anything": {},
                "meta": {"type": "object", "additionalProperties": {"type": "number"}},
                "author": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                    "required": ["name"]
                }
            },
            "required": ["owner", "author"],
            "additionalProperties": false
        }),
        Some(json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}, "next": {"type": "string"}},
            "required": ["count"]
        })),
    )
    .summary("List issues.");
    let d = one(cap).describe("repo.issues.list").unwrap();
    assert_eq!(
        d.signature,
        "repo.issues.list(*, owner: str, state: str | None, per_page: int | None, \
         labels: list[str] | None, since: str | None, extra: dict[str, any] | None, \
         anything: any | None, meta: dict[str, float] | None, author: {name: str, email?: str})"
    );
    assert_eq!(
        d.output,
        vec![entry("count", "int", true), entry("next", "str", false)]
    );
}

#[test]
fn manifest_schemas_refuse_unions_and_pattern_keys() {
    let cap = Capability::from_schemas(
        "x.y",
        json!({"type": "object", "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}),
        None,
    )
    .summary("X.");
    assert_eq!(shape_error(cap).1.path, "v");
    let cap = Capability::from_schemas(
        "x.y",
        json!({"type": "object", "properties": {"v": {"type": "object", "patternProperties": {"^a": {}}}}}),
        None,
    )
    .summary("X.");
    assert_eq!(shape_error(cap).1.reason, "maps need string keys");
}
