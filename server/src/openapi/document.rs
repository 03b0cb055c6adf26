//! Reading an OpenAPI description: the file or URL, JSON or YAML, the
//! version, and its references.
//!
//! [`read`] fetches the text (at most [`MAX_DOCUMENT_BYTES`]) and [`parse`]
//! turns it into JSON: a text starting with `{` is JSON, anything else
//! YAML (whose mapping keys, such as response codes, become strings). The
//! document must say `openapi: 3.0.x` or `3.1.x`; Swagger 2.0 is refused.
//! A 3.0 document is brought to 3.1's dialect of JSON Schema once, so one
//! schema mapping serves both: `nullable: true` becomes a `null` type and
//! a boolean `exclusiveMinimum`/`exclusiveMaximum` the numeric bound. Then
//! every `$ref` is checked: it must be local (`#/...`) and point at
//! something, and there may be at most [`MAX_REFS`]; [`resolve`] follows a
//! chain of references at most [`MAX_REF_CHAIN`] deep and refuses a cycle.
//! Nesting is bounded by [`MAX_DEPTH`]. Every error names the file and the
//! place (a JSON pointer, or a line for a syntax error).

use serde_json::{Map, Value};

/// The longest document read, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;
/// The deepest nesting of a document.
pub const MAX_DEPTH: usize = 128;
/// The most `$ref`s a document may hold.
pub const MAX_REFS: usize = 500_000;
/// The longest chain of references followed to reach a non-reference.
pub const MAX_REF_CHAIN: usize = 32;
/// How long fetching a document from a URL may take.
pub const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Why a document cannot be imported: the file (or URL), the place in it
/// and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {place}: {reason}")]
pub struct DocumentError {
    /// The file or URL.
    pub file: String,
    /// A JSON pointer (`/paths/~1pets/get`), a line, or `(document)`.
    pub place: String,
    /// What is wrong.
    pub reason: String,
}

/// A parsed, checked OpenAPI 3.0 or 3.1 document.
#[derive(Debug)]
pub struct Document {
    /// The file or URL it came from, for messages.
    pub file: String,
    /// The document, in 3.1's schema dialect.
    pub root: Value,
}

/// Reads the text of a file or URL.
pub async fn read(spec: &super::config::Spec) -> Result<String, DocumentError> {
    let file = spec.to_string();
    let fail = |reason: String| DocumentError {
        file: file.clone(),
        place: "(document)".into(),
        reason,
    };
    match spec {
        super::config::Spec::File(path) => {
            let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read: {e}")))?;
            if meta.len() > MAX_DOCUMENT_BYTES as u64 {
                return Err(fail(format!("larger than {MAX_DOCUMENT_BYTES} bytes")));
            }
            std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))
        }
        super::config::Spec::Url(url) => {
            let client = reqwest::Client::builder()
                .timeout(FETCH_TIMEOUT)
                .build()
                .map_err(|e| fail(format!("cannot fetch: {e}")))?;
            let mut response = client
                .get(url.as_str())
                .send()
                .await
                .map_err(|e| fail(format!("cannot fetch: {e}")))?;
            if !response.status().is_success() {
                return Err(fail(format!("cannot fetch: HTTP {}", response.status())));
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| fail(format!("cannot fetch: {e}")))?
            {
                if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                    return Err(fail(format!("larger than {MAX_DOCUMENT_BYTES} bytes")));
                }
                bytes.extend_from_slice(&chunk);
            }
            String::from_utf8(bytes).map_err(|_| fail("not UTF-8 text".into()))
        }
    }
}

/// Parses and checks a document's text (see the module documentation).
pub fn parse(file: &str, text: &str) -> Result<Document, DocumentError> {
    let error = |place: String, reason: String| DocumentError {
        file: file.to_string(),
        place,
        reason,
    };
    let mut root = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Value>(text).map_err(|e| {
            error(
                format!("line {} column {}", e.line(), e.column()),
                format!("invalid JSON: {e}"),
            )
        })?
    } else {
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| {
            let place = e
                .location()
                .map(|l| format!("line {} column {}", l.line(), l.column()))
                .unwrap_or_else(|| "(document)".into());
            error(place, format!("invalid YAML: {e}"))
        })?;
        let mut path = String::new();
        yaml_to_json(yaml, &mut path, 0).map_err(|e| e.in_file(file))?
    };
    let Some(object) = root.as_object() else {
        return Err(error(
            "(document)".into(),
            "not an OpenAPI document (no object)".into(),
        ));
    };
    if object.contains_key("swagger") {
        return Err(error(
            "/swagger".into(),
            "Swagger 2.0 is not supported; convert the document to OpenAPI 3".into(),
        ));
    }
    let version = match object.get("openapi").and_then(Value::as_str) {
        Some(v) if v == "3.0" || v.starts_with("3.0.") => Version::V30,
        Some(v) if v == "3.1" || v.starts_with("3.1.") => Version::V31,
        Some(v) => {
            return Err(error(
                "/openapi".into(),
                format!("OpenAPI version {v:?} is not supported (3.0 and 3.1 are)"),
            ))
        }
        None => {
            return Err(error(
                "/openapi".into(),
                "not an OpenAPI document (no openapi version)".into(),
            ))
        }
    };
    if !object.get("paths").is_none_or(Value::is_object) {
        return Err(error("/paths".into(), "paths is not an object".into()));
    }
    if version == Version::V30 {
        normalize_30(&mut root, 0);
    }
    let mut refs = 0usize;
    let mut path = String::new();
    check_refs(&root, &root, &mut path, 0, &mut refs).map_err(|e| e.in_file(file))?;
    Ok(Document {
        file: file.to_string(),
        root,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V30,
    V31,
}

/// A problem at a place of a document, before the file is named: what
/// [`DocumentError`] says without its `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// A JSON pointer (`/paths/~1pets/get`), a line, or `(document)`.
    pub place: String,
    /// What is wrong.
    pub reason: String,
}

impl Located {
    /// The problem `reason` at `place`.
    pub fn new(place: impl Into<String>, reason: impl Into<String>) -> Located {
        Located {
            place: place.into(),
            reason: reason.into(),
        }
    }

    /// This problem in `file`.
    pub fn in_file(self, file: &str) -> DocumentError {
        DocumentError {
            file: file.to_string(),
            place: self.place,
            reason: self.reason,
        }
    }
}

fn too_deep(path: &str) -> Located {
    Located::new(
        place(path),
        format!("nested more than {MAX_DEPTH} levels deep"),
    )
}

fn place(path: &str) -> String {
    if path.is_empty() {
        "/".into()
    } else {
        path.to_string()
    }
}

/// Appends a JSON pointer token (`~` and `/` escaped) to `path`.
pub fn push_token(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

fn yaml_to_json(
    value: serde_yaml_ng::Value,
    path: &mut String,
    depth: usize,
) -> Result<Value, Located> {
    use serde_yaml_ng::Value as Y;
    if depth > MAX_DEPTH {
        return Err(too_deep(path));
    }
    Ok(match value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map(Value::Number)
                    .ok_or_else(|| Located::new(place(path), "a number that is not finite"))?
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let len = path.len();
                push_token(path, &i.to_string());
                out.push(yaml_to_json(item, path, depth + 1)?);
                path.truncate(len);
            }
            Value::Array(out)
        }
        Y::Mapping(entries) => {
            let mut out = Map::with_capacity(entries.len());
            for (key, item) in entries {
                let key = match key {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    Y::Null => "null".into(),
                    _ => {
                        return Err(Located::new(
                            place(path),
                            "a mapping key that is not a scalar",
                        ))
                    }
                };
                let len = path.len();
                push_token(path, &key);
                let item = yaml_to_json(item, path, depth + 1)?;
                path.truncate(len);
                out.insert(key, item);
            }
            Value::Object(out)
        }
        Y::Tagged(tagged) => yaml_to_json(tagged.value, path, depth)?,
    })
}

/// Brings 3.0's schema keywords to 3.1's: `nullable: true` adds `null` to
/// the type (or, without a type, a `null` alternative), and a boolean
/// `exclusiveMinimum`/`exclusiveMaximum` turns its `minimum`/`maximum`
/// into the exclusive bound. Only objects where these keys hold booleans
/// are schemas using them (a property called `nullable` holds a schema).
fn normalize_30(value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            for item in map.values_mut() {
                normalize_30(item, depth + 1);
            }
            for (flag, bound) in [
                ("exclusiveMinimum", "minimum"),
                ("exclusiveMaximum", "maximum"),
            ] {
                if let Some(Value::Bool(on)) = map.get(flag) {
                    let on = *on;
                    map.remove(flag);
                    if on {
                        if let Some(b) = map.remove(bound) {
                            map.insert(flag.to_string(), b);
                        }
                    }
                }
            }
            if let Some(Value::Bool(nullable)) = map.get("nullable") {
                let nullable = *nullable;
                map.remove("nullable");
                if nullable {
                    make_nullable(map);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                normalize_30(item, depth + 1);
            }
        }
        _ => {}
    }
}

fn make_nullable(map: &mut Map<String, Value>) {
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), serde_json::json!([t, "null"]));
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                if !values.contains(&Value::Null) {
                    values.push(Value::Null);
                }
            }
        }
        Some(_) => {}
        None => {
            let inner = std::mem::take(map);
            map.insert(
                "anyOf".into(),
                serde_json::json!([Value::Object(inner), {"type": "null"}]),
            );
        }
    }
}

fn check_refs(
    root: &Value,
    value: &Value,
    path: &mut String,
    depth: usize,
    refs: &mut usize,
) -> Result<(), Located> {
    if depth > MAX_DEPTH {
        return Err(too_deep(path));
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                *refs += 1;
                if *refs > MAX_REFS {
                    return Err(Located::new(
                        place(path),
                        format!("more than {MAX_REFS} references"),
                    ));
                }
                let at = format!("{path}/$ref");
                target(root, r).map_err(|reason| Located::new(at, reason))?;
            }
            for (key, item) in map {
                let len = path.len();
                push_token(path, key);
                check_refs(root, item, path, depth + 1, refs)?;
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                push_token(path, &i.to_string());
                check_refs(root, item, path, depth + 1, refs)?;
                path.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

/// What a local reference points at.
fn target<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(format!(
            "external reference {reference:?} is not supported (only #/... references are)"
        ));
    };
    let pointer = percent_encoding::percent_decode_str(pointer).decode_utf8_lossy();
    root.pointer(&pointer)
        .ok_or_else(|| format!("unresolved reference {reference:?}"))
}

/// `value` with its `$ref` chain followed to a non-reference; the error
/// names a cycle, a chain longer than [`MAX_REF_CHAIN`] or an unresolved
/// reference.
pub fn resolve<'a>(root: &'a Value, mut value: &'a Value) -> Result<&'a Value, String> {
    let mut seen: Vec<&str> = Vec::new();
    while let Some(Value::String(r)) = value.get("$ref") {
        if seen.contains(&r.as_str()) {
            return Err(format!("reference cycle through {r:?}"));
        }
        if seen.len() >= MAX_REF_CHAIN {
            return Err(format!("more than {MAX_REF_CHAIN} chained references"));
        }
        seen.push(r);
        value = target(root, r)?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(text: &str) -> String {
        parse("api.yaml", text)
            .map(|_| ())
            .map_err(|e| e.to_string())
            .expect_err("refused")
    }

    #[test]
    fn yaml_and_json_read_alike() {
        let yaml = "openapi: 3.1.0\npaths:\n  /pets:\n    get:\n      responses:\n        200:\n          description: ok\n";
        let json = r#"{"openapi": "3.1.0", "paths": {"/pets": {"get": {"responses": {"200": {"description": "ok"}}}}}}"#;
        let a = parse("a.yaml", yaml).expect("yaml");
        let b = parse("a.json", json).expect("json");
        assert_eq!(a.root, b.root);
    }

    #[test]
    fn documents_that_cannot_be_imported_name_the_place() {
        assert_eq!(
            err("swagger: '2.0'\npaths: {}\n"),
            "api.yaml: /swagger: Swagger 2.0 is not supported; convert the document to OpenAPI 3"
        );
        assert_eq!(
            err("openapi: 4.0.0\n"),
            "api.yaml: /openapi: OpenAPI version \"4.0.0\" is not supported (3.0 and 3.1 are)"
        );
        assert_eq!(
            err("openapi: 3.0.3\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: 'common.yaml#/P'\n"),
            "api.yaml: /paths/~1a/get/parameters/0/$ref: external reference \"common.yaml#/P\" is not supported (only #/... references are)"
        );
        assert_eq!(
            err("openapi: 3.1.0\ncomponents:\n  schemas:\n    A:\n      $ref: '#/components/schemas/B'\n"),
            "api.yaml: /components/schemas/A/$ref: unresolved reference \"#/components/schemas/B\""
        );
        let e = err("openapi: 3.1.0\npaths: [1\n");
        assert!(e.starts_with("api.yaml: line 3 column"), "{e}");
        assert!(parse("a.json", "{\"openapi\": \"3.1.0\",}")
            .map_err(|e| e.place)
            .expect_err("bad json")
            .starts_with("line 1 column"));
        assert_eq!(
            err("openapi: 3.1.0\npaths: 3\n"),
            "api.yaml: /paths: paths is not an object"
        );
        assert_eq!(
            err("- 1\n"),
            "api.yaml: (document): not an OpenAPI document (no object)"
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!(
            "openapi: 3.1.0\nx: {}1{}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let e = err(&deep);
        assert!(e.starts_with("api.yaml: "), "{e}");
    }

    #[test]
    fn reference_chains_are_bounded_and_cycles_refused() {
        let doc = json!({"a": {"$ref": "#/b"}, "b": {"$ref": "#/a"}, "c": {"$ref": "#/d"}, "d": {"type": "string"}, "e": {"$ref": "#/x~1y"}, "x/y": 1});
        assert_eq!(resolve(&doc, &doc["c"]), Ok(&json!({"type": "string"})));
        assert_eq!(
            resolve(&doc, &doc["a"]),
            Err("reference cycle through \"#/b\"".into())
        );
        assert_eq!(resolve(&doc, &doc["e"]), Ok(&json!(1)));
        let mut long = serde_json::Map::new();
        for i in 0..40 {
            long.insert(format!("r{i}"), json!({"$ref": format!("#/r{}", i + 1)}));
        }
        long.insert("r40".into(), json!(true));
        let long = Value::Object(long);
        assert_eq!(
            resolve(&long, &long["r0"]),
            Err("more than 32 chained references".into())
        );
    }

    #[test]
    fn openapi_30_schemas_become_31_schemas() {
        let doc = parse(
            "a.json",
            r##"{"openapi": "3.0.3", "components": {"schemas": {
                "A": {"type": "string", "nullable": true, "enum": ["x"]},
                "B": {"allOf": [{"$ref": "#/components/schemas/A"}], "nullable": true},
                "C": {"type": "integer", "minimum": 1, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false},
                "D": {"type": "object", "properties": {"nullable": {"type": "boolean"}}}
            }}}"##,
        )
        .expect("valid");
        let s = &doc.root["components"]["schemas"];
        assert_eq!(
            s["A"],
            json!({"type": ["string", "null"], "enum": ["x", null]})
        );
        assert_eq!(
            s["B"],
            json!({"anyOf": [{"allOf": [{"$ref": "#/components/schemas/A"}]}, {"type": "null"}]})
        );
        assert_eq!(
            s["C"],
            json!({"type": "integer", "exclusiveMinimum": 1, "maximum": 9})
        );
        assert_eq!(s["D"]["properties"]["nullable"], json!({"type": "boolean"}));
    }
}
