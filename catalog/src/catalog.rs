//! The immutable catalog of enabled capabilities, and its builder.
//!
//! [`CatalogBuilder`] collects [`Capability`] drafts (typed ones and
//! manifest entries) and IDs to disable, and [`CatalogBuilder::build`]
//! validates everything before anything is served: names and IDs, reserved
//! roots, duplicates, a name that is also another name's namespace, search
//! terms, texts, field shapes and input rules. It fails atomically with
//! every problem found. A disabled capability is dropped before indexing,
//! so it is absent from search, describe and execution alike. The
//! [`Catalog`] answers describe by exact name and search through its
//! precomputed [`crate::search::SearchIndex`].

use crate::annotations::Annotations;
use crate::capability::{Capability, ErasedHandler};
use crate::names::{CapabilityId, CapabilityName, NameError};
use crate::schema::{self, SchemaSource, ShapeError};
use crate::search::{SearchError, SearchIndex, SearchLimits, SearchResponse};
use crate::shape::{self, FieldSchema, FieldShape, Rule, Shape, ShapeKind};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// At most this many search terms per capability.
pub const MAX_SEARCH_TERMS: usize = 32;
/// At most this many bytes per search term.
pub const MAX_SEARCH_TERM_BYTES: usize = 128;
/// At most this many bytes of summary.
pub const MAX_SUMMARY_BYTES: usize = 1024;

/// One enabled capability, validated.
pub(crate) struct Entry {
    pub(crate) name: CapabilityName,
    pub(crate) id: CapabilityId,
    pub(crate) summary: String,
    pub(crate) description: String,
    pub(crate) search_terms: Vec<String>,
    pub(crate) input: Vec<FieldShape>,
    pub(crate) output: Vec<FieldShape>,
    pub(crate) signature: String,
    pub(crate) annotations: Annotations,
    /// Whether results are checked against the output shape: for backends
    /// outside the type system that publish one, and for any with output
    /// rules (a typed result fits its derived shape by construction).
    pub(crate) check_output: bool,
    pub(crate) handler: Option<ErasedHandler>,
}

/// The enabled capabilities, immutable once built.
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    index: SearchIndex,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field("capabilities", &self.entries.len())
            .finish()
    }
}

/// Describe's answer for one capability.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Description {
    pub name: String,
    pub signature: String,
    pub summary: String,
    pub description: String,
    pub input: Vec<FieldSchema>,
    pub output: Vec<FieldSchema>,
}

/// No enabled capability has that exact name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("capability not found")]
pub struct NotFound;

/// A capability as the service sees it.
pub struct CapabilityRef<'a>(&'a Entry);

impl<'a> CapabilityRef<'a> {
    pub fn name(&self) -> &'a CapabilityName {
        &self.0.name
    }
    pub fn id(&self) -> &'a CapabilityId {
        &self.0.id
    }
    pub fn input(&self) -> &'a [FieldShape] {
        &self.0.input
    }
    pub fn output(&self) -> &'a [FieldShape] {
        &self.0.output
    }
    pub fn signature(&self) -> &'a str {
        &self.0.signature
    }
    pub fn summary(&self) -> &'a str {
        &self.0.summary
    }
    pub fn annotations(&self) -> Annotations {
        self.0.annotations
    }
    pub(crate) fn check_output(&self) -> bool {
        self.0.check_output
    }
    pub(crate) fn handler(&self) -> Option<&'a ErasedHandler> {
        self.0.handler.as_ref()
    }
}

impl Catalog {
    /// A builder.
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::default()
    }

    /// The number of enabled capabilities.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no capability is enabled.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The enabled dotted names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }

    /// The enabled capability with exactly this name.
    pub fn get(&self, name: &str) -> Option<CapabilityRef<'_>> {
        self.by_name
            .get(name)
            .map(|&i| CapabilityRef(&self.entries[i]))
    }

    /// Describe: exact name only, no trimming or case folding.
    pub fn describe(&self, name: &str) -> Result<Description, NotFound> {
        let e = self
            .by_name
            .get(name)
            .map(|&i| &self.entries[i])
            .ok_or(NotFound)?;
        Ok(Description {
            name: e.name.to_string(),
            signature: e.signature.clone(),
            summary: e.summary.clone(),
            description: e.description.clone(),
            input: e.input.iter().map(FieldShape::input_schema).collect(),
            output: e.output.iter().map(FieldShape::output_schema).collect(),
        })
    }

    /// Search with the default limits.
    pub fn search(&self, query: &str) -> Result<SearchResponse, SearchError> {
        self.search_with(query, &SearchLimits::default())
    }

    /// Search with explicit limits.
    pub fn search_with(
        &self,
        query: &str,
        limits: &SearchLimits,
    ) -> Result<SearchResponse, SearchError> {
        self.index.search(query, limits)
    }
}

/// A problem found while building a catalog.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error(transparent)]
    Name(#[from] NameError),
    #[error("duplicate capability name {0:?}")]
    DuplicateName(String),
    #[error("duplicate capability ID {0:?}")]
    DuplicateId(String),
    #[error("capability name {0:?} is also the namespace of {1:?}")]
    NamespaceClash(String, String),
    #[error("capability {0:?}: {1}")]
    Text(String, String),
    #[error("capability {name:?}: {which} shape: {error}")]
    Shape {
        name: String,
        which: &'static str,
        error: ShapeError,
    },
    #[error("capability {0:?}: input rule on {1:?}: {2}")]
    Rule(String, String, RuleError),
    #[error("capability {0:?}: output rule on {1:?}: {2}")]
    OutputRule(String, String, RuleError),
    #[error("disabled capability ID {0:?} does not exist")]
    UnknownDisabled(String),
}

/// Why a rule cannot be attached at its path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A segment of the path names no field.
    #[error("no such field")]
    NoSuchField,
    /// The shape at the path (its notation) takes no such rule.
    #[error("the rule does not apply to {0}")]
    DoesNotApply(String),
    /// The path goes into a shape that has no such part (`[]` into a
    /// non-list, `.` into a non-struct).
    #[error("the path does not match the shape")]
    PathMismatch,
}

/// Building a catalog failed; nothing was built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid catalog: {}", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct BuildError {
    /// Every problem found.
    pub problems: Vec<Problem>,
}

/// Collects capabilities, then validates them all at once.
#[derive(Default)]
pub struct CatalogBuilder {
    capabilities: Vec<Capability>,
    disabled: Vec<String>,
}

impl CatalogBuilder {
    /// Adds a capability.
    pub fn capability(mut self, capability: Capability) -> CatalogBuilder {
        self.capabilities.push(capability);
        self
    }

    /// Adds capabilities.
    pub fn capabilities(mut self, caps: impl IntoIterator<Item = Capability>) -> CatalogBuilder {
        self.capabilities.extend(caps);
        self
    }

    /// Adds every entry of a manifest.
    pub fn manifest(self, manifest: Manifest) -> CatalogBuilder {
        self.capabilities(
            manifest
                .capabilities
                .into_iter()
                .map(ManifestEntry::into_capability),
        )
    }

    /// Disables the capability with this ID.
    pub fn disable(mut self, id: impl Into<String>) -> CatalogBuilder {
        self.disabled.push(id.into());
        self
    }

    /// Validates everything and builds the catalog, or reports every
    /// problem.
    pub fn build(self) -> Result<Catalog, BuildError> {
        let mut problems = Vec::new();
        let mut entries = Vec::with_capacity(self.capabilities.len());
        for cap in self.capabilities {
            if let Some(e) = validate(cap, &mut problems) {
                entries.push(e);
            }
        }
        let mut names = HashSet::new();
        let mut ids = HashSet::new();
        for e in &entries {
            if !names.insert(e.name.as_str()) {
                problems.push(Problem::DuplicateName(e.name.to_string()));
            }
            if !ids.insert(e.id.as_str()) {
                problems.push(Problem::DuplicateId(e.id.to_string()));
            }
        }
        for e in &entries {
            let name = e.name.as_str();
            for (i, _) in name.match_indices('.').skip(1) {
                if names.contains(&name[..i]) {
                    problems.push(Problem::NamespaceClash(
                        name[..i].to_string(),
                        name.to_string(),
                    ));
                }
            }
        }
        for d in &self.disabled {
            if !ids.contains(d.as_str()) {
                problems.push(Problem::UnknownDisabled(d.clone()));
            }
        }
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }
        let disabled: HashSet<&str> = self.disabled.iter().map(String::as_str).collect();
        entries.retain(|e| !disabled.contains(e.id.as_str()));
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.to_string(), i))
            .collect();
        let index = SearchIndex::build(&entries);
        Ok(Catalog {
            entries,
            by_name,
            index,
        })
    }
}

fn validate(cap: Capability, problems: &mut Vec<Problem>) -> Option<Entry> {
    let before = problems.len();
    let name = CapabilityName::new(cap.name.clone())
        .map_err(|e| problems.push(e.into()))
        .ok();
    let id = CapabilityId::new(cap.id.clone().unwrap_or_else(|| cap.name.clone()))
        .map_err(|e| problems.push(e.into()))
        .ok();
    let text = |problems: &mut Vec<Problem>, msg: String| {
        problems.push(Problem::Text(cap.name.clone(), msg));
    };
    if cap.summary.trim().is_empty() {
        text(problems, "summary is empty".into());
    }
    if cap.summary.len() > MAX_SUMMARY_BYTES {
        text(
            problems,
            format!("summary is longer than {MAX_SUMMARY_BYTES} bytes"),
        );
    }
    if cap.search_terms.len() > MAX_SEARCH_TERMS {
        text(
            problems,
            format!("more than {MAX_SEARCH_TERMS} search terms"),
        );
    }
    for t in &cap.search_terms {
        if t.trim().is_empty() || t.len() > MAX_SEARCH_TERM_BYTES {
            text(
                problems,
                format!("search terms must be 1-{MAX_SEARCH_TERM_BYTES} bytes and not blank"),
            );
            break;
        }
    }
    let shape_problem = |which, error| Problem::Shape {
        name: cap.name.clone(),
        which,
        error,
    };
    let fields = |s: &serde_json::Value| match cap.schema_document.as_deref() {
        Some(document) => schema::fields_from_schema_in(s, document, cap.source),
        None => schema::fields_from_schema(s, cap.source),
    };
    let mut input = fields(&cap.input_schema)
        .map_err(|e| problems.push(shape_problem("input", e)))
        .ok();
    let mut output = match &cap.output_schema {
        None => Some(Vec::new()),
        Some(s) => fields(s)
            .map_err(|e| problems.push(shape_problem("output", e)))
            .ok(),
    };
    if let Some(fields) = input.as_mut() {
        for (path, rule) in &cap.rules {
            if let Err(why) = attach_rule(fields, path, rule.clone()) {
                problems.push(Problem::Rule(cap.name.clone(), path.clone(), why));
            }
        }
    }
    if let (Some(fields), SchemaSource::Derived) = (&output, cap.source) {
        if let Some(path) = skipped_non_option(fields, "") {
            problems.push(shape_problem(
                "output",
                ShapeError {
                    path,
                    reason: "skipped when empty but not an Option (make it an Option skipped \
                             when None, or always serialize it)"
                        .into(),
                },
            ));
        }
    }
    if let Some(fields) = output.as_mut() {
        for (path, rule) in &cap.output_rules {
            if let Err(why) = attach_rule(fields, path, rule.clone()) {
                problems.push(Problem::OutputRule(cap.name.clone(), path.clone(), why));
            }
        }
    }
    if problems.len() > before {
        return None;
    }
    let (name, id, input, output) = (name?, id?, input?, output?);
    Some(Entry {
        signature: shape::signature(name.as_str(), &input),
        name,
        id,
        summary: cap.summary,
        description: cap.description,
        search_terms: cap.search_terms,
        input,
        output,
        annotations: cap.annotations,
        check_output: (cap.source != SchemaSource::Derived && cap.output_schema.is_some())
            || !cap.output_rules.is_empty(),
        handler: cap.handler,
    })
}

/// The path of the first output field a typed capability may leave out
/// (serde's `skip_serializing_if`) whose type is not an `Option`: the
/// guide refuses it, as a reader could not tell an empty value from a
/// missing one.
fn skipped_non_option(fields: &[FieldShape], prefix: &str) -> Option<String> {
    fields.iter().find_map(|f| {
        let path = if prefix.is_empty() {
            f.name.clone()
        } else {
            format!("{prefix}.{}", f.name)
        };
        if !f.required && !f.shape.is_optional() {
            return Some(path);
        }
        let mut shape = &f.shape;
        let mut path = path;
        loop {
            match &shape.kind {
                ShapeKind::Optional(inner) => shape = inner,
                ShapeKind::List(inner) => {
                    path.push_str("[]");
                    shape = inner;
                }
                ShapeKind::Map(inner) => {
                    path.push_str("{}");
                    shape = inner;
                }
                ShapeKind::Struct(inner) => return skipped_non_option(inner, &path),
                _ => return None,
            }
        }
    })
}

/// Finds the shape at `path` and adds `rule` to it (below any `| None`).
fn attach_rule(fields: &mut [FieldShape], path: &str, rule: Rule) -> Result<(), RuleError> {
    let (head, rest) = split_path(path);
    let field = fields
        .iter_mut()
        .find(|f| f.name == head)
        .ok_or(RuleError::NoSuchField)?;
    attach_below(&mut field.shape, rest, rule)
}

fn attach_below(shape: &mut Shape, rest: &str, rule: Rule) -> Result<(), RuleError> {
    if let ShapeKind::Optional(inner) = &mut shape.kind {
        return attach_below(inner, rest, rule);
    }
    if rest.is_empty() {
        let fits = matches!(
            (&rule, &shape.kind),
            (
                Rule::Minimum(_)
                    | Rule::Maximum(_)
                    | Rule::ExclusiveMinimum(_)
                    | Rule::ExclusiveMaximum(_),
                ShapeKind::Int | ShapeKind::Float,
            ) | (
                Rule::MinLength(_) | Rule::MaxLength(_),
                ShapeKind::Str | ShapeKind::List(_) | ShapeKind::Map(_),
            ) | (
                Rule::OneOf(_),
                ShapeKind::Str | ShapeKind::Int | ShapeKind::Float | ShapeKind::Bool,
            )
        );
        if !fits {
            return Err(RuleError::DoesNotApply(shape.notation()));
        }
        shape.rules.push(rule);
        return Ok(());
    }
    match &mut shape.kind {
        ShapeKind::List(inner) if rest.starts_with("[]") => attach_below(inner, &rest[2..], rule),
        ShapeKind::Map(inner) if rest.starts_with("{}") => attach_below(inner, &rest[2..], rule),
        ShapeKind::Struct(fields) if rest.starts_with('.') => attach_rule(fields, &rest[1..], rule),
        _ => Err(RuleError::PathMismatch),
    }
}

fn split_path(path: &str) -> (&str, &str) {
    let end = path.find(['.', '[', '{']).unwrap_or(path.len());
    path.split_at(end)
}

/// A JSON manifest: `{"capabilities": [...]}`; extra keys are ignored.
#[derive(Clone, Debug, Deserialize)]
pub struct Manifest {
    /// The entries.
    pub capabilities: Vec<ManifestEntry>,
}

/// One manifest entry.
#[derive(Clone, Debug, Deserialize)]
pub struct ManifestEntry {
    pub id: String,
    pub name: String,
    pub summary: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub search_terms: Vec<String>,
    pub input_schema: serde_json::Value,
    #[serde(default)]
    pub output_schema: Option<serde_json::Value>,
    /// The behaviour hints; a key left out keeps its default
    /// (`docs/architecture.md`, section 6).
    #[serde(default)]
    pub annotations: Annotations,
}

/// A manifest is not valid JSON of the expected form.
#[derive(Debug, thiserror::Error)]
#[error("invalid manifest: {0}")]
pub struct ManifestError(#[from] serde_json::Error);

impl Manifest {
    /// Parses manifest JSON.
    pub fn from_json(text: &str) -> Result<Manifest, ManifestError> {
        Ok(serde_json::from_str(text)?)
    }
}

impl ManifestEntry {
    /// The capability this entry describes; it has no backend.
    pub fn into_capability(self) -> Capability {
        Capability::from_schemas(self.name, self.input_schema, self.output_schema)
            .id(self.id)
            .summary(self.summary)
            .description(self.description)
            .search_terms(self.search_terms)
            .annotations(self.annotations)
    }
}
