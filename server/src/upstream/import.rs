//! Upstream tools as capabilities.
//!
//! [`import`] turns the tool list of one upstream server into capability
//! drafts: the name `NAME.<segment>` (see [`super::naming`]), the ID
//! `upstream.NAME.<original tool name>`, the summary from the tool's title
//! or the first sentence of its description, the description in full, the
//! input shape from `inputSchema` and the output shape from `outputSchema`
//! through the catalog's JSON Schema mapping in its upstream mode (what the
//! notation cannot express is `any`); the input's top-level properties are
//! named by argument identifiers ([`naming::argument`]: `max-count` is
//! `max_count`) and forwarded under their original names. A tool without
//! an `outputSchema` returns `{text: str, json: any | None}`, its text
//! content joined with newlines and that text decoded when it is one JSON
//! document (see [`super::text_result`]), and its description says so.
//! Each draft is checked on its own, so one tool the
//! catalog refuses (an ID too long, a root schema that is no object) is
//! left out with a warning instead of failing the others.
//!
//! The handler forwards the canonical arguments through the server's
//! [`Link`] and converts the result: `isError: true` is the public failure
//! `capability failed: <its text>` (cut at 256 bytes by the catalog);
//! `structuredContent` (or, from a server that omits it, the JSON object
//! in its first text item) must fit the output shape; anything else is
//! `capability failed` without detail.

use super::client::Link;
use super::naming;
use super::text_result::{self, TextResult};
use crate::logging::foreign;
use codemode_catalog::FieldShape;
use codemode_catalog::{
    conform_output, Annotations, Capability, Catalog, Data, HandlerError, Limits,
};
use codemode_catalog::{fields_from_schema, SchemaSource};
use rmcp::model::{CallToolResult, Tool};
use std::collections::HashSet;
use std::sync::Arc;

/// Longest summary kept, in bytes (cut at a character boundary).
pub const MAX_SUMMARY_BYTES: usize = 512;
/// Longest description kept, in bytes (cut at a character boundary).
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// What describe says of a tool without an output schema.
pub const TEXT_RESULT_NOTE: &str = text_result::NOTE;

/// How a tool's result becomes the capability's output.
enum Output {
    /// `{text: str, json: any | None}`.
    Text(TextResult),
    /// `structuredContent` checked against these fields.
    Structured(Vec<FieldShape>),
}

/// The capabilities of one server's tools; `disabled` IDs are left out.
/// `limits` are those of the executions that will call them (the decoded
/// `json` of a text result is held to their value budgets).
pub fn import(
    server: &str,
    tools: &[Tool],
    link: &Arc<Link>,
    disabled: &HashSet<String>,
    limits: &Limits,
) -> Vec<Capability> {
    // A name listed twice is one tool: the first listing counts.
    let mut seen = HashSet::with_capacity(tools.len());
    let tools: Vec<&Tool> = tools
        .iter()
        .filter(|t| {
            let first = seen.insert(t.name.as_ref());
            if !first {
                tracing::warn!(upstream = server, tool = %foreign(&t.name), "tool listed twice; the first listing counts");
            }
            first
        })
        .collect();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let segments = naming::assign(&names);
    let mut out = Vec::with_capacity(tools.len());
    for (tool, segment) in tools.into_iter().zip(segments) {
        let id = format!("upstream.{server}.{}", tool.name);
        if disabled.contains(&id) {
            continue;
        }
        match capability(server, tool, &segment, id, link, limits) {
            Ok(cap) => out.push(cap),
            Err(why) => {
                tracing::warn!(upstream = server, tool = %foreign(&tool.name), "tool left out: {why}");
            }
        }
    }
    out
}

fn capability(
    server: &str,
    tool: &Tool,
    segment: &str,
    id: String,
    link: &Arc<Link>,
    limits: &Limits,
) -> Result<Capability, String> {
    let (input_schema, renamed) = argument_names((*tool.input_schema).clone());
    let mut output = Output::Text(TextResult::new(limits));
    let mut output_schema = TextResult::schema();
    if let Some(schema) = &tool.output_schema {
        let schema = serde_json::Value::Object((**schema).clone());
        match fields_from_schema(&schema, SchemaSource::Upstream) {
            Ok(fields) => {
                output = Output::Structured(fields);
                output_schema = schema;
            }
            Err(e) => {
                tracing::warn!(
                    upstream = server,
                    tool = %foreign(&tool.name),
                    "output schema not usable ({e}); the result is its text"
                );
            }
        }
    }
    let mut description = cut(
        tool.description.as_deref().unwrap_or(""),
        MAX_DESCRIPTION_BYTES,
    );
    if matches!(output, Output::Text(_)) {
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str(TEXT_RESULT_NOTE);
    }
    let original = tool.name.to_string();
    let mut terms = Vec::new();
    if original != segment && !original.trim().is_empty() && original.len() <= 128 {
        terms.push(original.clone());
    }
    let link = link.clone();
    let output = Arc::new(output);
    let renamed = Arc::new(renamed);
    let tool_name: Arc<str> = Arc::from(original.as_str());
    let cap = Capability::from_upstream_schemas(
        format!("{server}.{segment}"),
        input_schema,
        Some(output_schema),
    )
    .id(id)
    .summary(summary(tool, server))
    .description(description)
    .search_terms(terms)
    .annotations(annotations(tool))
    .json_handler(move |mut arguments| {
        let (link, output, tool_name) = (link.clone(), output.clone(), tool_name.clone());
        original_names(&mut arguments, &renamed);
        async move {
            let result = link.call(&tool_name, arguments).await?;
            convert(result, &output)
        }
    });
    Catalog::builder()
        .capability(cap.clone())
        .build()
        .map_err(|e| e.to_string())?;
    Ok(cap)
}

/// The input schema with its top-level properties named by their
/// argument identifiers ([`naming::argument`]: `max-count` is `max_count`),
/// and the (identifier, original name) pairs of the renamed ones.
fn argument_names(
    mut schema: serde_json::Map<String, serde_json::Value>,
) -> (serde_json::Value, Vec<(String, String)>) {
    let Some(serde_json::Value::Object(props)) = schema.remove("properties") else {
        return (serde_json::Value::Object(schema), Vec::new());
    };
    let originals: Vec<&str> = props.keys().map(String::as_str).collect();
    let bases = originals.iter().map(|n| naming::argument(n)).collect();
    let names = naming::resolve(&originals, bases, &mut HashSet::new());
    let renamed: Vec<(String, String)> = names
        .iter()
        .zip(&originals)
        .filter(|(new, old)| new != *old)
        .map(|(new, old)| (new.clone(), old.to_string()))
        .collect();
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        for r in required.iter_mut() {
            if let Some((new, _)) = renamed
                .iter()
                .find(|(_, old)| Some(old.as_str()) == r.as_str())
            {
                *r = serde_json::Value::String(new.clone());
            }
        }
    }
    let props: serde_json::Map<String, serde_json::Value> = names
        .into_iter()
        .zip(props.into_iter().map(|(_, v)| v))
        .collect();
    schema.insert("properties".into(), serde_json::Value::Object(props));
    (serde_json::Value::Object(schema), renamed)
}

/// Puts the original names of renamed arguments back (the canonical
/// arguments are keyed by identifiers).
pub(crate) fn original_names(arguments: &mut serde_json::Value, renamed: &[(String, String)]) {
    let serde_json::Value::Object(map) = arguments else {
        return;
    };
    for (new, old) in renamed {
        if let Some(v) = map.remove(new) {
            map.insert(old.clone(), v);
        }
    }
}

/// The capability's annotations from the tool's hints; a hint the tool
/// leaves out (or no annotations at all) keeps its default
/// (`docs/architecture.md`, section 6).
fn annotations(tool: &Tool) -> Annotations {
    match &tool.annotations {
        Some(a) => Annotations::from_hints(
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        ),
        None => Annotations::default(),
    }
}

/// The tool's title, else the first sentence of its description, else a
/// plain statement of what it is.
fn summary(tool: &Tool, server: &str) -> String {
    let title = tool
        .title
        .as_deref()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.as_deref()))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let text = match title {
        Some(t) => t.to_string(),
        None => first_sentence(tool.description.as_deref().unwrap_or("")),
    };
    let text = cut(&text, MAX_SUMMARY_BYTES);
    if text.trim().is_empty() {
        format!("The tool {} of the upstream server {server}.", tool.name)
    } else {
        text
    }
}

/// The text up to the first sentence end (`.`, `!` or `?` followed by
/// white space or the end) or blank line, with white space collapsed.
pub(crate) fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let mut end = text.len();
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?') {
            let next = bytes.get(i + 1).copied();
            if next.is_none_or(|b| b.is_ascii_whitespace()) {
                end = i + 1;
                break;
            }
        }
        if c == '\n'
            && text[i + 1..]
                .trim_start_matches([' ', '\t'])
                .starts_with('\n')
        {
            end = i;
            break;
        }
    }
    text[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` bytes at a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// The text items of a result, joined with newlines.
fn joined_text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    texts.join("\n")
}

fn convert(result: CallToolResult, output: &Output) -> Result<serde_json::Value, HandlerError> {
    if result.is_error == Some(true) {
        return Err(HandlerError::public(joined_text(&result)));
    }
    match output {
        Output::Text(text) => Ok(text.value(joined_text(&result))),
        Output::Structured(fields) => {
            let value = match result.structured_content {
                Some(value) => value,
                None => {
                    let first = result
                        .content
                        .iter()
                        .find_map(|c| c.as_text())
                        .ok_or_else(|| HandlerError::internal("no structured content"))?;
                    serde_json::from_str(&first.text)
                        .map_err(|_| HandlerError::internal("no structured content"))?
                }
            };
            conform_json(fields, &value)
        }
    }
}

/// A result from outside the type system (an upstream tool's structured
/// content, an HTTP response) conformed to the output `fields`: the value
/// as the shape describes it, or `capability failed` without detail.
pub(crate) fn conform_json(
    fields: &[FieldShape],
    value: &serde_json::Value,
) -> Result<serde_json::Value, HandlerError> {
    let data = Data::from_json(value)
        .ok_or_else(|| HandlerError::internal("the result is out of range"))?;
    let data = conform_output(fields, data).map_err(HandlerError::internal)?;
    Ok(codemode_catalog::data_to_json(&data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> Tool {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let serde_json::Value::Object(schema) = schema else {
            unreachable!()
        };
        Tool::new(name.to_string(), description.to_string(), Arc::new(schema))
    }

    #[test]
    fn annotations_come_from_the_tool_hints() {
        use rmcp::model::ToolAnnotations;
        assert_eq!(annotations(&tool("a", "")), Annotations::default());
        let hinted = tool("a", "").annotate(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .open_world(false),
        );
        assert_eq!(
            annotations(&hinted),
            Annotations {
                read_only: true,
                destructive: false,
                idempotent: false,
                open_world: false
            }
        );
    }

    #[test]
    fn summaries_are_titles_or_first_sentences() {
        assert_eq!(
            first_sentence("Read a file. Returns its text, e.g. for v1.2 files."),
            "Read a file."
        );
        assert_eq!(
            first_sentence("Version 1.2 reader\n\nMore."),
            "Version 1.2 reader"
        );
        assert_eq!(first_sentence("  spans\n  lines  "), "spans lines");
        let mut t = tool("read_file", "Read a file. More.");
        assert_eq!(summary(&t, "fs"), "Read a file.");
        t.title = Some("Read File".into());
        assert_eq!(summary(&t, "fs"), "Read File");
        let t = tool("x", "");
        assert_eq!(summary(&t, "fs"), "The tool x of the upstream server fs.");
    }

    #[test]
    fn tools_become_capabilities() {
        let link = Link::new("fs");
        let tools = [
            tool("readFile", "Read a file."),
            tool("read_file", "Read."),
            tool("readFile", "Listed twice."),
            tool("bad\tname", "An ID cannot hold it."),
        ];
        let disabled = HashSet::from(["upstream.fs.read_file".to_string()]);
        let caps = import("fs", &tools, &link, &disabled, &Limits::default());
        assert_eq!(caps.len(), 1);
        let catalog = Catalog::builder()
            .capabilities(caps)
            .build()
            .expect("valid");
        let d = catalog.describe("fs.read_file_2").expect("renamed");
        assert_eq!(d.signature, "fs.read_file_2(*, path: str | None)");
        assert_eq!(d.output[0].r#type, "str");
        assert_eq!(d.output[1].r#type, "any | None");
        assert!(
            d.description.ends_with(TEXT_RESULT_NOTE),
            "{}",
            d.description
        );
        let found = catalog.search("readFile").expect("search");
        assert_eq!(found.results[0].name, "fs.read_file_2");
    }

    #[test]
    fn arguments_are_identifiers_forwarded_under_their_names() {
        let schema = json!({"type": "object", "properties": {
            "max-count": {"type": "integer"}, "max_count": {"type": "string"}, "in": {"type": "string"}
        }, "required": ["max-count", "in"]});
        let serde_json::Value::Object(schema) = schema else {
            unreachable!()
        };
        let (schema, renamed) = argument_names(schema);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
                "max_count_2": {"type": "integer"}, "max_count": {"type": "string"}, "in_": {"type": "string"}
            }, "required": ["max_count_2", "in_"]})
        );
        let mut args = json!({"max_count_2": 3, "max_count": "x", "in_": "y"});
        original_names(&mut args, &renamed);
        assert_eq!(args, json!({"max-count": 3, "max_count": "x", "in": "y"}));
    }

    #[test]
    fn results_convert_or_fail() {
        let text = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        let as_text = Output::Text(TextResult::new(&Limits::default()));
        assert_eq!(
            convert(text.clone(), &as_text).ok(),
            Some(json!({"text": "a\nb", "json": null}))
        );
        let listing = CallToolResult::success(vec![
            ContentBlock::text("[\"a.txt\","),
            ContentBlock::text("\"b.txt\"]"),
        ]);
        assert_eq!(
            convert(listing, &as_text).ok(),
            Some(json!({"text": "[\"a.txt\",\n\"b.txt\"]", "json": ["a.txt", "b.txt"]}))
        );
        let fields = fields_from_schema(
            &json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            SchemaSource::Upstream,
        )
        .expect("fields");
        let structured = Output::Structured(fields);
        let ok = CallToolResult::structured(json!({"n": 3, "extra": true}));
        assert_eq!(convert(ok, &structured).ok(), Some(json!({"n": 3})));
        let wrong = CallToolResult::structured(json!({"n": "3"}));
        assert!(convert(wrong, &structured).is_err_and(|e| e.public_message().is_none()));
        let mut failed = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        failed.structured_content = None;
        let e = convert(failed, &structured).expect_err("tool error");
        assert_eq!(e.public_message(), Some("no such file"));
        // A server that sends JSON text only.
        let legacy = CallToolResult::success(vec![ContentBlock::text(r#"{"n": 5}"#)]);
        assert_eq!(convert(legacy, &structured).ok(), Some(json!({"n": 5})));
        assert!(convert(text, &structured).is_err());
    }
}
