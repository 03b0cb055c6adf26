//! The operations of a document, read into what a capability needs.
//!
//! [`operations`] walks `paths` in document order. Each operation has its
//! HTTP method (kept for whoever classifies operations as read-only or
//! destructive), its path template, its ID (the `operationId`, else
//! `METHOD path`), its texts, its parameters (path-level ones merged under
//! the operation's own; cookies left out, and so are the header parameters
//! OpenAPI says to ignore — `Accept`, `Content-Type`, `Authorization` —
//! and headers no program may set), its request body (a JSON object's
//! properties, or the whole body) and the kind of its output: the first
//! 2xx response's `application/json` schema (an object as is, an array as
//! `{items: list[T]}`, another JSON value as `{value: T}`), no content
//! (`{}`) or a body that is not JSON (`{text: str}`). Read-only properties
//! of a request body are left out. A malformed operation, or an
//! operationId used twice, is an error naming its place.

use super::document::{push_token, resolve, Document, DocumentError, Located};
use reqwest::Method;
use serde_json::{Map, Value};

/// Header names no program may set, whatever the document declares.
pub const FORBIDDEN_HEADERS: &[&str] = &[
    "accept",
    "authorization",
    "connection",
    "content-length",
    "content-type",
    "cookie",
    "host",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One operation of the document.
#[derive(Clone, Debug)]
pub struct Operation {
    /// The HTTP method.
    pub method: Method,
    /// The path template (`/repos/{owner}/{repo}`).
    pub path: String,
    /// The `operationId`, if any.
    pub operation_id: Option<String>,
    /// `summary`.
    pub summary: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// Path, query and header parameters.
    pub parameters: Vec<Parameter>,
    /// The request body.
    pub body: Option<Body>,
    /// What a successful response becomes.
    pub output: Output,
    /// The media type of that response (sent as `Accept`), if it has one.
    pub accept: Option<String>,
    /// `deprecated`.
    pub deprecated: bool,
}

impl Operation {
    /// The operation's ID within its source: the `operationId`, else
    /// `METHOD path`.
    pub fn key(&self) -> String {
        match &self.operation_id {
            Some(id) => id.clone(),
            None => format!("{} {}", self.method, self.path),
        }
    }
}

/// Where a parameter goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    Path,
    Query,
    Header,
}

/// How a parameter's value is written (OpenAPI's `style`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `simple` (path and header default).
    Simple,
    /// `form` (query default).
    Form,
    /// `spaceDelimited`.
    SpaceDelimited,
    /// `pipeDelimited`.
    PipeDelimited,
    /// `deepObject`.
    DeepObject,
    /// `label` (path).
    Label,
    /// `matrix` (path).
    Matrix,
}

/// One parameter.
#[derive(Clone, Debug)]
pub struct Parameter {
    /// The name the API knows.
    pub name: String,
    /// Where it goes.
    pub location: Location,
    /// Whether it must be given.
    pub required: bool,
    /// Its schema (a local reference or an inline schema; `{}` when none).
    pub schema: Value,
    /// Its style.
    pub style: Style,
    /// Whether arrays and objects are exploded.
    pub explode: bool,
}

/// The request body.
#[derive(Clone, Debug)]
pub enum Body {
    /// A JSON object whose properties are arguments.
    Properties {
        /// The media type sent.
        media: String,
        /// The properties in order, with their schemas.
        properties: Vec<(String, Value)>,
        /// The properties that must be given (none if the body itself is
        /// optional).
        required: Vec<String>,
    },
    /// The whole body as the argument `body`.
    Whole {
        /// The media type sent.
        media: String,
        /// Its schema (`{}` when none).
        schema: Value,
        /// Whether it must be given.
        required: bool,
    },
}

/// What a successful response becomes.
#[derive(Clone, Debug)]
pub enum Output {
    /// A JSON object, conformed to this schema as is.
    Object(Value),
    /// A JSON array: `{items: list[T]}` with the array's schema.
    Items(Value),
    /// Another JSON value: `{value: T}`.
    Value(Value),
    /// No content: `{}`.
    Empty,
    /// A body that is not JSON: `{text: str}`.
    Text,
}

/// Every operation of the document, in document order.
pub fn operations(doc: &Document) -> Result<Vec<Operation>, DocumentError> {
    all_operations(&doc.root).map_err(|e| e.in_file(&doc.file))
}

fn all_operations(root: &Value) -> Result<Vec<Operation>, Located> {
    let mut out = Vec::new();
    let Some(paths) = root.get("paths").and_then(Value::as_object) else {
        return Ok(out);
    };
    // operationId → where it was first seen: IDs must be unique.
    let mut ids: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for (path, item) in paths {
        let mut at = String::from("/paths");
        push_token(&mut at, path);
        if !path.starts_with('/') {
            return Err(Located::new(at, "a path must start with /"));
        }
        let item = resolve(root, item).map_err(|e| Located::new(at.clone(), e))?;
        let item = item
            .as_object()
            .ok_or_else(|| Located::new(at.clone(), "a path item is not an object"))?;
        let shared = item.get("parameters");
        for method in METHODS {
            let Some(op) = item.get(method) else {
                continue;
            };
            let mut op_at = at.clone();
            push_token(&mut op_at, method);
            let op = op
                .as_object()
                .ok_or_else(|| Located::new(op_at.clone(), "an operation is not an object"))?;
            let operation = read_operation(root, path, method, op, shared, &op_at)?;
            if let Some(id) = &operation.operation_id {
                if let Some(first) = ids.insert(id.clone(), op_at.clone()) {
                    return Err(Located::new(
                        format!("{op_at}/operationId"),
                        format!("operationId {id:?} is also the ID of {first}"),
                    ));
                }
            }
            out.push(operation);
        }
    }
    Ok(out)
}

fn text(op: &Map<String, Value>, key: &str) -> Option<String> {
    op.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn read_operation(
    root: &Value,
    path: &str,
    method: &str,
    op: &Map<String, Value>,
    shared: Option<&Value>,
    at: &str,
) -> Result<Operation, Located> {
    let operation_id = match op.get("operationId") {
        None => None,
        Some(Value::String(id)) if !id.trim().is_empty() => Some(id.clone()),
        Some(_) => {
            return Err(Located::new(
                format!("{at}/operationId"),
                "operationId is not a non-empty string",
            ))
        }
    };
    let tags = op
        .get("tags")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut parameters: Vec<Parameter> = Vec::new();
    // Path-level parameters first; an operation's own with the same name
    // and location replaces one.
    let lists = [
        (
            shared,
            at.rsplit_once('/').map_or(at, |(p, _)| p).to_string(),
        ),
        (op.get("parameters"), at.to_string()),
    ];
    for (list, list_at) in lists {
        let Some(list) = list else { continue };
        let list = list.as_array().ok_or_else(|| {
            Located::new(
                format!("{list_at}/parameters"),
                "parameters is not an array",
            )
        })?;
        for (i, p) in list.iter().enumerate() {
            let p_at = format!("{list_at}/parameters/{i}");
            let Some(p) = parameter(root, p, &p_at)? else {
                continue;
            };
            parameters.retain(|q| !(q.name == p.name && q.location == p.location));
            parameters.push(p);
        }
    }
    for segment in template_names(path) {
        if !parameters
            .iter()
            .any(|p| p.location == Location::Path && p.name == segment)
        {
            return Err(Located::new(
                at.to_string(),
                format!("path parameter {segment:?} is not declared"),
            ));
        }
    }
    parameters
        .retain(|p| p.location != Location::Path || template_names(path).any(|s| s == p.name));
    let body = match op.get("requestBody") {
        Some(b) => request_body(root, b, &format!("{at}/requestBody"))?,
        None => None,
    };
    let (output, accept) = output(root, op.get("responses"), &format!("{at}/responses"))?;
    Ok(Operation {
        method: Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap_or(Method::GET),
        path: path.to_string(),
        operation_id,
        summary: text(op, "summary"),
        description: text(op, "description"),
        tags,
        parameters,
        body,
        output,
        accept,
        deprecated: op.get("deprecated") == Some(&Value::Bool(true)),
    })
}

/// The names in a path template's braces.
pub fn template_names(path: &str) -> impl Iterator<Item = &str> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

fn parameter(root: &Value, p: &Value, at: &str) -> Result<Option<Parameter>, Located> {
    let fail = |reason: &str| Located::new(at, reason);
    let p = resolve(root, p).map_err(|e| Located::new(at.to_string(), e))?;
    let p = p
        .as_object()
        .ok_or_else(|| fail("a parameter is not an object"))?;
    let name = p
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| fail("a parameter needs a name"))?;
    let location = match p.get("in").and_then(Value::as_str) {
        Some("path") => Location::Path,
        Some("query") => Location::Query,
        Some("header") => Location::Header,
        Some("cookie") => return Ok(None),
        _ => {
            return Err(fail(
                "a parameter's \"in\" must be path, query, header or cookie",
            ))
        }
    };
    if location == Location::Header
        && FORBIDDEN_HEADERS.contains(&name.to_ascii_lowercase().as_str())
    {
        return Ok(None);
    }
    let schema = match (p.get("schema"), p.get("content")) {
        (Some(s), _) => s.clone(),
        (None, Some(Value::Object(content))) => content
            .values()
            .next()
            .and_then(|m| m.get("schema"))
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new())),
        _ => Value::Object(Map::new()),
    };
    let style = match p.get("style").and_then(Value::as_str) {
        None => match location {
            Location::Query => Style::Form,
            _ => Style::Simple,
        },
        Some("simple") => Style::Simple,
        Some("form") => Style::Form,
        Some("spaceDelimited") => Style::SpaceDelimited,
        Some("pipeDelimited") => Style::PipeDelimited,
        Some("deepObject") => Style::DeepObject,
        Some("label") => Style::Label,
        Some("matrix") => Style::Matrix,
        Some(other) => return Err(fail(&format!("unknown parameter style {other:?}"))),
    };
    let explode = p
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == Style::Form);
    Ok(Some(Parameter {
        name: name.to_string(),
        location,
        required: location == Location::Path
            || p.get("required").and_then(Value::as_bool).unwrap_or(false),
        schema,
        style,
        explode,
    }))
}

/// Whether a media type is JSON (`application/json`, `…+json`).
pub fn is_json(media: &str) -> bool {
    let essence = media.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        || essence.to_ascii_lowercase().ends_with("+json")
}

/// The JSON media type of a content map (`application/json` first), or
/// `None`.
fn json_media(content: &Map<String, Value>) -> Option<(&String, &Value)> {
    content
        .iter()
        .find(|(m, _)| m.eq_ignore_ascii_case("application/json"))
        .or_else(|| content.iter().find(|(m, _)| is_json(m)))
}

fn request_body(root: &Value, b: &Value, at: &str) -> Result<Option<Body>, Located> {
    let b = resolve(root, b).map_err(|e| Located::new(at.to_string(), e))?;
    let b = b
        .as_object()
        .ok_or_else(|| Located::new(at, "requestBody is not an object"))?;
    let required = b.get("required").and_then(Value::as_bool).unwrap_or(false);
    let Some(content) = b.get("content").and_then(Value::as_object) else {
        return Ok(None);
    };
    let empty = Value::Object(Map::new());
    if let Some((media, m)) = json_media(content) {
        let schema = m.get("schema").unwrap_or(&empty);
        let target = object_schema(root, schema);
        if let Some(obj) = target {
            if let Some(props) = obj.get("properties").and_then(Value::as_object) {
                let names: Vec<String> = match obj.get("required") {
                    Some(Value::Array(r)) if required => r
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    _ => Vec::new(),
                };
                let only_named = obj
                    .get("additionalProperties")
                    .is_none_or(|a| *a == Value::Bool(false));
                // Read-only properties are the server's: never sent.
                let read_only = |v: &Value| {
                    resolve(root, v).is_ok_and(|s| s.get("readOnly") == Some(&Value::Bool(true)))
                };
                let properties: Vec<(String, Value)> = props
                    .iter()
                    .filter(|(_, v)| !read_only(v))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !properties.is_empty() && only_named {
                    let required = names
                        .into_iter()
                        .filter(|n| properties.iter().any(|(k, _)| k == n))
                        .collect();
                    return Ok(Some(Body::Properties {
                        media: media.clone(),
                        properties,
                        required,
                    }));
                }
            }
        }
        return Ok(Some(Body::Whole {
            media: media.clone(),
            schema: schema.clone(),
            required,
        }));
    }
    let Some((media, m)) = content.iter().next() else {
        return Ok(None);
    };
    let schema = if media.starts_with("text/") {
        serde_json::json!({"type": "string"})
    } else if media.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
        m.get("schema").cloned().unwrap_or_else(|| empty.clone())
    } else {
        // Bytes of another kind: sent as the text given.
        serde_json::json!({"type": "string"})
    };
    Ok(Some(Body::Whole {
        media: media.clone(),
        schema,
        required,
    }))
}

/// The object a schema is, following references and a lone `allOf`.
fn object_schema<'a>(root: &'a Value, schema: &'a Value) -> Option<&'a Map<String, Value>> {
    let mut schema = schema;
    for _ in 0..super::document::MAX_REF_CHAIN {
        schema = resolve(root, schema).ok()?;
        let obj = schema.as_object()?;
        match obj
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([one]) if !obj.contains_key("properties") => schema = one,
            _ => {
                let typed_object = obj.get("type").is_none_or(|t| t == "object");
                return (typed_object && obj.contains_key("properties")).then_some(obj);
            }
        }
    }
    None
}

fn is_array(root: &Value, schema: &Value) -> bool {
    resolve(root, schema)
        .ok()
        .and_then(|s| s.get("type"))
        .is_some_and(|t| t == "array")
}

/// The output kind and its media type.
fn output(
    root: &Value,
    responses: Option<&Value>,
    at: &str,
) -> Result<(Output, Option<String>), Located> {
    let Some(responses) = responses else {
        return Ok((Output::Empty, None));
    };
    let responses = responses
        .as_object()
        .ok_or_else(|| Located::new(at, "responses is not an object"))?;
    let mut codes: Vec<&String> = responses
        .keys()
        .filter(|c| c.len() == 3 && c.starts_with('2'))
        .collect();
    // Exact codes before a range (`2XX`).
    codes.sort_by_key(|c| (!c.bytes().all(|b| b.is_ascii_digit()), c.as_str()));
    let Some(code) = codes.first() else {
        return Ok((Output::Empty, None));
    };
    let mut r_at = at.to_string();
    push_token(&mut r_at, code);
    let response =
        resolve(root, &responses[code.as_str()]).map_err(|e| Located::new(r_at.clone(), e))?;
    let Some(content) = response.get("content").and_then(Value::as_object) else {
        return Ok((Output::Empty, None));
    };
    let Some((media, body)) = json_media(content) else {
        return Ok(match content.keys().next() {
            Some(media) => (Output::Text, Some(media.clone())),
            None => (Output::Empty, None),
        });
    };
    let output = match body.get("schema") {
        None => Output::Value(Value::Object(Map::new())),
        Some(schema) if object_schema(root, schema).is_some() => Output::Object(schema.clone()),
        Some(schema) if is_array(root, schema) => Output::Items(schema.clone()),
        Some(schema) => Output::Value(schema.clone()),
    };
    Ok((output, Some(media.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::document::parse;

    fn ops(yaml: &str) -> Result<Vec<Operation>, DocumentError> {
        operations(&parse("t.yaml", yaml).expect("parses"))
    }

    #[test]
    fn parameters_merge_and_skip_what_no_program_sets() {
        let got = ops(r#"
openapi: 3.0.3
paths:
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, required: true, schema: {type: string}}
      - {name: limit, in: query, schema: {type: integer}}
    get:
      parameters:
        - {name: limit, in: query, required: true, schema: {type: integer, maximum: 5}}
        - {name: session, in: cookie, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: tags, in: query, style: pipeDelimited, schema: {type: array, items: {type: string}}}
      responses:
        '204': {description: none}
"#)
        .expect("valid");
        let op = &got[0];
        assert_eq!(op.method, Method::GET);
        assert_eq!(op.key(), "GET /pets/{petId}");
        let names: Vec<(&str, Location, bool)> = op
            .parameters
            .iter()
            .map(|p| (p.name.as_str(), p.location, p.required))
            .collect();
        assert_eq!(
            names,
            [
                ("petId", Location::Path, true),
                ("limit", Location::Query, true),
                ("X-Trace", Location::Header, false),
                ("tags", Location::Query, false),
            ]
        );
        assert_eq!(op.parameters[1].style, Style::Form);
        assert!(op.parameters[1].explode);
        assert_eq!(op.parameters[3].style, Style::PipeDelimited);
        assert!(!op.parameters[3].explode);
        assert!(matches!(op.output, Output::Empty));
    }

    #[test]
    fn bodies_and_outputs_take_their_kinds() {
        let got = ops(r#"
openapi: 3.1.0
components:
  schemas:
    Pet: {type: object, required: [name], properties: {name: {type: string}, tag: {type: string}}}
    Pets: {type: array, items: {$ref: '#/components/schemas/Pet'}}
paths:
  /pets:
    post:
      operationId: createPet
      requestBody:
        required: true
        content:
          application/json: {schema: {$ref: '#/components/schemas/Pet'}}
      responses:
        '201': {description: made, content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}}
    get:
      responses:
        '200': {description: all, content: {application/json: {schema: {$ref: '#/components/schemas/Pets'}}}}
    put:
      requestBody:
        content:
          text/plain: {schema: {type: string}}
      responses:
        '200': {description: text, content: {text/plain: {schema: {type: string}}}}
    delete:
      requestBody:
        content:
          application/json: {schema: {type: array, items: {type: integer}}}
      responses:
        '200': {description: count, content: {application/json: {schema: {type: integer}}}}
"#)
        .expect("valid");
        let [get, put, post, delete] = got.as_slice() else {
            panic!("four operations: {got:?}")
        };
        match &post.body {
            Some(Body::Properties {
                properties,
                required,
                ..
            }) => {
                let names: Vec<&str> = properties.iter().map(|(n, _)| n.as_str()).collect();
                assert_eq!(names, ["name", "tag"]);
                assert_eq!(required, &["name"]);
            }
            other => panic!("properties: {other:?}"),
        }
        assert!(matches!(post.output, Output::Object(_)));
        assert!(matches!(get.output, Output::Items(_)));
        assert!(
            matches!(&put.body, Some(Body::Whole { media, required: false, .. }) if media == "text/plain")
        );
        assert!(matches!(put.output, Output::Text));
        assert!(matches!(&delete.body, Some(Body::Whole { .. })));
        assert!(matches!(delete.output, Output::Value(_)));
    }

    #[test]
    fn malformed_operations_name_their_place() {
        let e = ops("openapi: 3.1.0\npaths:\n  /a/{id}:\n    get:\n      responses: {}\n")
            .expect_err("undeclared");
        assert_eq!(
            e.to_string(),
            "t.yaml: /paths/~1a~1{id}/get: path parameter \"id\" is not declared"
        );
        let e = ops(
            "openapi: 3.1.0\npaths:\n  /a:\n    get:\n      parameters:\n        - {in: query}\n",
        )
        .expect_err("no name");
        assert_eq!(e.place, "/paths/~1a/get/parameters/0");
        let e = ops("openapi: 3.1.0\npaths:\n  /a:\n    get:\n      operationId: 3\n")
            .expect_err("bad id");
        assert_eq!(e.place, "/paths/~1a/get/operationId");
        let e = ops(
            "openapi: 3.1.0\npaths:\n  /a:\n    get: {operationId: x}\n    put: {operationId: x}\n",
        )
        .expect_err("twice");
        assert_eq!(
            e,
            DocumentError {
                file: "t.yaml".into(),
                place: "/paths/~1a/put/operationId".into(),
                reason: "operationId \"x\" is also the ID of /paths/~1a/get".into(),
            }
        );
    }
}
