//! Operations as capabilities.
//!
//! [`import`] turns the operations of one document into capability drafts.
//! The name is `NAME.` plus the operationId split at `/` and `.`, each
//! segment a snake-case identifier by the rule upstream tool names follow
//! (`pulls/list` → `github.pulls.list`), or without an operationId the
//! method and the path's words (`GET /pets/{petId}` →
//! `petstore.get_pets_pet_id`); collisions, and a name that would also be
//! another's namespace, are resolved as for upstream tools. The ID is
//! `openapi.NAME.<operationId>` (or `openapi.NAME.<METHOD> <path>`). The
//! summary is `summary`, else the first sentence of `description`; the
//! description is kept (bounded) with the method and path after it; tags,
//! path words and operationId words are search terms. The input is the
//! parameters by identifier names (a JSON object body's properties too,
//! `body_` before one that collides with a parameter; any other body is
//! `body`), their schemas resolved against the document; the output is the
//! operation's output kind (see [`super::operation`]). An operation whose
//! input the catalog cannot map, or whose ID is too long, is left out with
//! a warning; an output it cannot map is `{value: any}`.

use super::call::{ApiClient, BodyPlan, Call, OutputPlan};
use super::operation::{Body, Operation, Output};
use crate::logging::{escape_controls, foreign};
use crate::upstream::import::{cut, first_sentence, MAX_DESCRIPTION_BYTES, MAX_SUMMARY_BYTES};
use crate::upstream::naming;
use codemode_catalog::{fields_from_schema_in, SchemaSource};
use codemode_catalog::{Annotations, Capability};
use codemode_catalog::{CapabilityId, CapabilityName};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// One imported operation: its capability and what it was made from.
pub struct ImportedOperation {
    /// The HTTP method (GET, PUT, DELETE, ...), for classifying the
    /// operation.
    pub method: reqwest::Method,
    /// The capability.
    pub capability: Capability,
}

/// The capabilities of `operations` of source `name`, calling through
/// `client`.
pub fn import(
    name: &str,
    document: &Arc<Value>,
    operations: Vec<Operation>,
    client: &Arc<ApiClient>,
) -> Vec<ImportedOperation> {
    let keys: Vec<String> = operations.iter().map(Operation::key).collect();
    let keys_ref: Vec<&str> = keys.iter().map(String::as_str).collect();
    let bases: Vec<String> = operations.iter().map(|op| dotted(name, op)).collect();
    // A name that is a proper prefix of another (`x.a` and `x.a.b`) would
    // be both a capability and a namespace: the prefix is taken first.
    let mut taken: HashSet<String> = HashSet::new();
    for base in &bases {
        for (i, _) in base.match_indices('.').skip(1) {
            taken.insert(base[..i].to_string());
        }
    }
    let names = naming::resolve(&keys_ref, bases, &mut taken);
    let mut out = Vec::with_capacity(operations.len());
    for ((op, key), cap_name) in operations.into_iter().zip(keys).zip(names) {
        let id = format!("openapi.{name}.{key}");
        if CapabilityId::new(id.clone()).is_err() || CapabilityName::new(cap_name.clone()).is_err()
        {
            tracing::warn!(openapi = name, operation = %foreign(&key), "operation left out: its name or ID is too long or not printable");
            continue;
        }
        match capability(document, op, cap_name, id, client) {
            Ok(imported) => out.push(imported),
            Err(why) => {
                tracing::warn!(
                    openapi = name,
                    operation = %foreign(&key),
                    "operation left out: {}",
                    escape_controls(&why)
                );
            }
        }
    }
    out
}

/// `NAME.` + the operation's segments.
fn dotted(name: &str, op: &Operation) -> String {
    let mut out = name.to_string();
    match &op.operation_id {
        Some(id) => {
            for segment in id.split(['/', '.']).filter(|s| !s.is_empty()) {
                out.push('.');
                out.push_str(&naming::identifier(segment));
            }
            if out.len() == name.len() {
                out.push('.');
                out.push_str(&naming::identifier(id));
            }
        }
        None => {
            out.push('.');
            out.push_str(&naming::identifier(&format!(
                "{} {}",
                op.method.as_str().to_ascii_lowercase(),
                op.path
            )));
        }
    }
    out
}

fn capability(
    document: &Arc<Value>,
    op: Operation,
    cap_name: String,
    id: String,
    client: &Arc<ApiClient>,
) -> Result<ImportedOperation, String> {
    // Arguments: parameters first, then the body.
    let originals: Vec<&str> = op.parameters.iter().map(|p| p.name.as_str()).collect();
    let bases = originals.iter().map(|n| naming::argument(n)).collect();
    let mut taken = HashSet::new();
    let param_args = naming::resolve(&originals, bases, &mut taken);
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (arg, p) in param_args.iter().zip(&op.parameters) {
        properties.insert(arg.clone(), p.schema.clone());
        if p.required {
            required.push(Value::String(arg.clone()));
        }
    }
    let body = match &op.body {
        None => BodyPlan::None,
        Some(Body::Properties {
            media,
            properties: props,
            required: needed,
        }) => {
            let originals: Vec<&str> = props.iter().map(|(n, _)| n.as_str()).collect();
            let bases = originals
                .iter()
                .map(|n| {
                    let arg = naming::argument(n);
                    if taken.contains(&arg) {
                        format!("body_{arg}")
                    } else {
                        arg
                    }
                })
                .collect();
            let args = naming::resolve(&originals, bases, &mut taken);
            let mut fields = Vec::with_capacity(args.len());
            for (arg, (prop, schema)) in args.into_iter().zip(props) {
                properties.insert(arg.clone(), schema.clone());
                if needed.contains(prop) {
                    required.push(Value::String(arg.clone()));
                }
                fields.push((arg, prop.clone()));
            }
            BodyPlan::Properties {
                media: media.clone(),
                fields,
            }
        }
        Some(Body::Whole {
            media,
            schema,
            required: needed,
        }) => {
            let arg = naming::resolve(&["body"], vec!["body".into()], &mut taken).remove(0);
            properties.insert(arg.clone(), schema.clone());
            if *needed {
                required.push(Value::String(arg.clone()));
            }
            BodyPlan::Whole {
                media: media.clone(),
                arg,
            }
        }
    };
    let input_schema = json!({"type": "object", "properties": properties, "required": required});
    fields_from_schema_in(&input_schema, document, SchemaSource::Upstream)
        .map_err(|e| format!("input: {e}"))?;
    let (plan, mut output_schema) = match &op.output {
        Output::Object(s) => (OutputPlan::Object, s.clone()),
        Output::Items(s) => (OutputPlan::Items, wrap("items", s)),
        Output::Value(s) => (OutputPlan::Value, wrap("value", s)),
        Output::Empty => (
            OutputPlan::Empty,
            json!({"type": "object", "properties": {}}),
        ),
        Output::Text => (OutputPlan::Text, wrap("text", &json!({"type": "string"}))),
    };
    let (plan, fields) =
        match fields_from_schema_in(&output_schema, document, SchemaSource::Upstream) {
            Ok(fields) => (plan, fields),
            Err(e) => {
                tracing::warn!(
                    operation = %foreign(&id),
                    "output schema not usable ({}); the result is {{value: any}}",
                    escape_controls(&e.to_string())
                );
                output_schema = wrap("value", &json!({}));
                let fields =
                    fields_from_schema_in(&output_schema, document, SchemaSource::Upstream)
                        .map_err(|e| format!("output: {e}"))?;
                (OutputPlan::Value, fields)
            }
        };
    let summary = summary(&op);
    let mut description = cut(
        op.description.as_deref().unwrap_or(""),
        MAX_DESCRIPTION_BYTES,
    );
    if !description.is_empty() {
        description.push_str("\n\n");
    }
    description.push_str(&format!("HTTP: {} {}", op.method, op.path));
    if op.deprecated {
        description.push_str(" (deprecated)");
    }
    let terms = search_terms(&op);
    let method = op.method.clone();
    let accept = op
        .accept
        .as_deref()
        .and_then(|m| reqwest::header::HeaderValue::from_str(m).ok());
    let call = Arc::new(Call {
        accept,
        method: op.method,
        path: op.path,
        parameters: param_args.into_iter().zip(op.parameters).collect(),
        body,
        output: plan,
        fields,
    });
    let client = client.clone();
    let capability = Capability::from_upstream_schemas(cap_name, input_schema, Some(output_schema))
        .schema_document(document.clone())
        .id(id)
        .summary(summary)
        .description(description)
        .search_terms(terms)
        .annotations(Annotations::for_http_method(method.as_str()))
        .json_handler(move |arguments| {
            let (call, client) = (call.clone(), client.clone());
            async move { call.run(&client, arguments).await }
        });
    Ok(ImportedOperation { method, capability })
}

fn wrap(field: &str, schema: &Value) -> Value {
    json!({"type": "object", "properties": {field: schema}, "required": [field]})
}

/// `summary`, else the first sentence of `description`, else the method
/// and path.
fn summary(op: &Operation) -> String {
    let text = match &op.summary {
        Some(s) => s.split_whitespace().collect::<Vec<_>>().join(" "),
        None => first_sentence(op.description.as_deref().unwrap_or("")),
    };
    let text = cut(&text, MAX_SUMMARY_BYTES);
    if text.trim().is_empty() {
        format!("{} {}", op.method, op.path)
    } else {
        text
    }
}

/// Tags, the path's words and the operationId's words, each once, at most
/// the catalog's 32.
fn search_terms(op: &Operation) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    let mut add = |t: &str| {
        let t = t.trim();
        if !t.is_empty() && t.len() <= 128 && terms.len() < 32 && !terms.iter().any(|x| x == t) {
            terms.push(t.to_string());
        }
    };
    for tag in &op.tags {
        add(tag);
    }
    for word in op
        .path
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        add(word);
    }
    if let Some(id) = &op.operation_id {
        add(id);
        for word in naming::identifier(id).split('_') {
            add(word);
        }
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::document::parse;
    use crate::openapi::operation::operations;
    use codemode_catalog::Catalog;

    const PETS: &str = r#"
openapi: 3.0.3
info: {title: pets, version: '1'}
components:
  schemas:
    Pet:
      type: object
      required: [id, name]
      properties:
        id: {type: integer, readOnly: true}
        name: {type: string, minLength: 1, maxLength: 20}
        tag: {type: string, nullable: true}
paths:
  /pets:
    get:
      operationId: listPets
      tags: [pets]
      summary: List all pets
      parameters:
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 100}}
        - {name: max-count, in: query, schema: {type: integer}}
      responses:
        '200':
          description: A page of pets.
          content:
            application/json:
              schema: {type: array, items: {$ref: '#/components/schemas/Pet'}}
    post:
      operationId: pets/create
      description: Create a pet. It gets an ID.
      parameters:
        - {name: name, in: query, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Pet'}
      responses:
        '201': {description: made, content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}}
  /pets/{petId}:
    get:
      parameters:
        - {name: petId, in: path, required: true, schema: {type: string}}
        - {name: kind, in: query, schema: {type: string, enum: [cat, dog]}}
      responses:
        '200': {description: one, content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}}
    delete:
      operationId: pets.delete
      parameters:
        - {name: petId, in: path, required: true, schema: {type: string}}
      responses:
        '204': {description: gone}
  /pets/{petId}/photo:
    get:
      operationId: pets/delete/photo
      parameters:
        - {name: petId, in: path, required: true, schema: {type: string}}
      responses:
        '200': {description: text, content: {text/plain: {schema: {type: string}}}}
"#;

    fn catalog() -> (Catalog, Vec<reqwest::Method>) {
        let doc = parse("pets.yaml", PETS).expect("parses");
        let ops = operations(&doc).expect("operations");
        let document = Arc::new(doc.root);
        let client = Arc::new(
            ApiClient::new(
                "http://127.0.0.1:9",
                Default::default(),
                1024,
                Default::default(),
            )
            .expect("client"),
        );
        let imported = import("pets", &document, ops, &client);
        let methods = imported.iter().map(|i| i.method.clone()).collect();
        let caps = imported.into_iter().map(|i| i.capability);
        (
            Catalog::builder()
                .capabilities(caps)
                .build()
                .expect("builds"),
            methods,
        )
    }

    #[test]
    fn operations_become_named_capabilities() {
        let (catalog, methods) = catalog();
        let names: Vec<&str> = catalog.names().collect();
        assert_eq!(
            names,
            [
                "pets.get_pets_pet_id",
                "pets.list_pets",
                "pets.pets.create",
                "pets.pets.delete.photo",
                "pets.pets.delete_2",
            ]
        );
        assert_eq!(
            methods,
            [
                reqwest::Method::GET,
                reqwest::Method::POST,
                reqwest::Method::GET,
                reqwest::Method::DELETE,
                reqwest::Method::GET
            ]
        );
        let ids: Vec<String> = names
            .iter()
            .map(|n| catalog.get(n).expect("present").id().to_string())
            .collect();
        assert_eq!(
            ids,
            [
                "openapi.pets.GET /pets/{petId}",
                "openapi.pets.listPets",
                "openapi.pets.pets/create",
                "openapi.pets.pets/delete/photo",
                "openapi.pets.pets.delete",
            ]
        );
    }

    #[test]
    fn operations_are_annotated_by_their_method() {
        let (catalog, _) = catalog();
        let flags = |name: &str| {
            let a = catalog.get(name).expect("present").annotations();
            (a.read_only, a.destructive, a.idempotent, a.open_world)
        };
        // GET: read-only; POST: the defaults; DELETE: destructive.
        assert_eq!(flags("pets.list_pets"), (true, false, true, true));
        assert_eq!(flags("pets.get_pets_pet_id"), (true, false, true, true));
        assert_eq!(flags("pets.pets.create"), (false, true, false, true));
        assert_eq!(flags("pets.pets.delete_2"), (false, true, true, true));
    }

    #[test]
    fn inputs_and_outputs_follow_the_schemas() {
        let (catalog, _) = catalog();
        let list = catalog.describe("pets.list_pets").expect("list");
        assert_eq!(
            list.signature,
            "pets.list_pets(*, limit: int | None, max_count: int | None)"
        );
        assert_eq!(list.summary, "List all pets");
        let output: Vec<(&str, &str)> = list
            .output
            .iter()
            .map(|f| (f.name.as_str(), f.r#type.as_str()))
            .collect();
        assert_eq!(output, [("items", "list[{id: int, name: str, tag?: str}]")]);
        let create = catalog.describe("pets.pets.create").expect("create");
        assert_eq!(
            create.signature,
            "pets.pets.create(*, name: str | None, body_name: str, tag: str | None)"
        );
        assert_eq!(create.summary, "Create a pet.");
        assert!(
            create.description.ends_with("HTTP: POST /pets"),
            "{}",
            create.description
        );
        let get = catalog.describe("pets.get_pets_pet_id").expect("get");
        assert_eq!(
            get.signature,
            "pets.get_pets_pet_id(*, pet_id: str, kind: str | None)"
        );
        assert_eq!(get.summary, "GET /pets/{petId}");
        let photo = catalog.describe("pets.pets.delete.photo").expect("photo");
        assert_eq!(photo.output[0].name, "text");
        let delete = catalog.describe("pets.pets.delete_2").expect("delete");
        assert!(delete.output.is_empty());
        let found = catalog.search("listPets").expect("search");
        assert_eq!(found.results[0].name, "pets.list_pets");
    }
}
