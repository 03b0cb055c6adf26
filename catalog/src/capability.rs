//! Capabilities as the host defines them.
//!
//! A [`Capability`] is a dotted name, a stable ID, texts for search and
//! describe, the JSON Schemas of its input and output, input [`Rule`]s, and
//! (for typed capabilities) an async handler. [`Capability::new`] derives
//! both schemas from the handler's serde types through `schemars` — the
//! input for deserialization, the output for serialization, so an
//! `Option` skipped when `None` is an optional output field (a field of
//! another type skipped when empty is refused at registration) — and erases the
//! handler into one that takes the canonical arguments as [`Data`] and returns
//! [`Data`]. [`Capability::with_context`] does the same for a handler that
//! also takes a [`CallContext`] (subject, capability ID, remaining deadline,
//! cancellation token). A capability carries its [`Annotations`] and may
//! declare output rules, checked on every result. A capability is only a
//! draft: [`crate::CatalogBuilder`] validates it.

use crate::annotations::Annotations;
use crate::auth::Subject;
use crate::convert::{data_into_json, to_data};
use crate::decode::from_data;
use crate::names::CapabilityId;
use crate::schema::SchemaSource;
use crate::shape::Rule;
use codemode_vm::Data;
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The longest public failure message a client sees; longer ones are cut
/// at a character boundary.
pub const MAX_PUBLIC_MESSAGE_BYTES: usize = 256;

/// A handler's failure. Its detail stays on the host unless it was made
/// with [`HandlerError::public`].
pub struct HandlerError {
    public: Option<String>,
    detail: String,
    limit: bool,
}

impl HandlerError {
    /// A failure whose message the client may see
    /// (`capability failed: <message>`, at most 256 bytes).
    pub fn public(message: impl Into<String>) -> HandlerError {
        let message = message.into();
        HandlerError {
            detail: message.clone(),
            public: Some(message),
            limit: false,
        }
    }

    /// A failure because the handler's input or output would exceed a
    /// budget of the execution (`resource limit exceeded`, e.g. a response
    /// body longer than MaxValueBytes); the detail stays on the host.
    pub fn resource_limit(detail: impl fmt::Display) -> HandlerError {
        HandlerError {
            public: None,
            detail: detail.to_string(),
            limit: true,
        }
    }

    /// Whether this is a [`HandlerError::resource_limit`] failure.
    pub fn is_resource_limit(&self) -> bool {
        self.limit
    }

    /// A failure whose message stays on the host (`capability failed`).
    pub fn internal(detail: impl fmt::Display) -> HandlerError {
        HandlerError {
            public: None,
            detail: detail.to_string(),
            limit: false,
        }
    }

    /// The public message, capped at [`MAX_PUBLIC_MESSAGE_BYTES`]. An empty
    /// message counts as none.
    pub fn public_message(&self) -> Option<&str> {
        let m = self.public.as_deref()?;
        if m.is_empty() {
            return None;
        }
        let mut end = m.len().min(MAX_PUBLIC_MESSAGE_BYTES);
        while !m.is_char_boundary(end) {
            end -= 1;
        }
        Some(&m[..end])
    }

    /// The host-side detail (for logs, never for clients).
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Debug for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandlerError")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl<E: std::error::Error> From<E> for HandlerError {
    fn from(e: E) -> HandlerError {
        HandlerError::internal(e)
    }
}

/// What a handler may know about the call it serves: the subject, the
/// capability's ID, the execution's deadline and its cancellation token.
/// The token is cancelled when the client cancels or goes away; a handler
/// that waits on something slow should stop when it is.
#[derive(Clone, Debug)]
pub struct CallContext {
    subject: Subject,
    capability_id: CapabilityId,
    deadline: Instant,
    cancel: CancellationToken,
}

impl CallContext {
    /// A context (for hosts that call handlers themselves, e.g. in tests).
    pub fn new(
        subject: Subject,
        capability_id: CapabilityId,
        deadline: Instant,
        cancel: CancellationToken,
    ) -> CallContext {
        CallContext {
            subject,
            capability_id,
            deadline,
            cancel,
        }
    }

    /// The trusted subject the call runs for.
    pub fn subject(&self) -> &Subject {
        &self.subject
    }

    /// The capability's stable ID.
    pub fn capability_id(&self) -> &CapabilityId {
        &self.capability_id
    }

    /// When the execution's time runs out.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The time left before the deadline.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The execution's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
}

/// The call as the service hands it to an erased handler: borrowed, so a
/// handler that takes no context costs nothing.
pub(crate) struct CallInfo<'a> {
    pub(crate) subject: &'a Subject,
    pub(crate) capability_id: &'a CapabilityId,
    pub(crate) deadline: Instant,
    pub(crate) cancel: &'a CancellationToken,
}

impl CallInfo<'_> {
    fn to_context(&self) -> CallContext {
        CallContext::new(
            self.subject.clone(),
            self.capability_id.clone(),
            self.deadline,
            self.cancel.clone(),
        )
    }
}

/// Why an erased handler call failed.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The canonical arguments did not deserialize into the input type.
    Input,
    /// The handler failed.
    Handler(HandlerError),
    /// The output cannot cross (non-finite float, u64 above i64::MAX...).
    Output,
}

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = Result<Data, CallFailure>> + Send>>;

/// A typed handler's future: its output or failure.
type TypedFuture<O> = Pin<Box<dyn Future<Output = Result<O, CallFailure>> + Send>>;

/// A handler with its types erased: canonical arguments in, data out.
pub(crate) type ErasedHandler = Arc<dyn Fn(Data, &CallInfo<'_>) -> BoxFuture + Send + Sync>;

/// A capability before validation.
#[derive(Clone)]
pub struct Capability {
    pub(crate) name: String,
    pub(crate) id: Option<String>,
    pub(crate) summary: String,
    pub(crate) description: String,
    pub(crate) search_terms: Vec<String>,
    pub(crate) input_schema: serde_json::Value,
    pub(crate) output_schema: Option<serde_json::Value>,
    pub(crate) source: SchemaSource,
    pub(crate) rules: Vec<(String, Rule)>,
    pub(crate) output_rules: Vec<(String, Rule)>,
    pub(crate) annotations: Annotations,
    pub(crate) handler: Option<ErasedHandler>,
    /// The document local `$ref`s of the schemas resolve against (none:
    /// each schema itself).
    pub(crate) schema_document: Option<Arc<serde_json::Value>>,
}

impl fmt::Debug for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capability")
            .field("name", &self.name)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

fn schema_for<T: JsonSchema>(settings: SchemaSettings) -> serde_json::Value {
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

impl Capability {
    /// A typed capability: `handler` takes the deserialized input and
    /// returns the output or a [`HandlerError`]. The ID defaults to the
    /// name.
    pub fn new<I, O, F, Fut>(name: impl Into<String>, handler: F) -> Capability
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        Capability::typed::<I, O, _>(name, move |args, _| {
            let handler = handler.clone();
            Box::pin(async move {
                let input: I = args?;
                handler(input).await.map_err(CallFailure::Handler)
            })
        })
    }

    /// A typed capability whose handler also takes the call's
    /// [`CallContext`]: `async fn(CallContext, input)`.
    pub fn with_context<I, O, F, Fut>(name: impl Into<String>, handler: F) -> Capability
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(CallContext, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        Capability::typed::<I, O, _>(name, move |args, info| {
            let handler = handler.clone();
            let context = info.to_context();
            Box::pin(async move {
                let input: I = args?;
                handler(context, input).await.map_err(CallFailure::Handler)
            })
        })
    }

    /// The typed capability of `call`, which gets the decoded input (or
    /// the failure to decode it) and the call, and returns the output's
    /// future.
    fn typed<I, O, C>(name: impl Into<String>, call: C) -> Capability
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        C: Fn(Result<I, CallFailure>, &CallInfo<'_>) -> TypedFuture<O> + Send + Sync + 'static,
    {
        let input_schema = schema_for::<I>(SchemaSettings::draft2020_12().for_deserialize());
        // A unit input (`()`) has no fields and deserializes from null.
        let unit_input = input_schema.get("type").and_then(|t| t.as_str()) == Some("null");
        let erased: ErasedHandler = Arc::new(move |args: Data, info: &CallInfo<'_>| {
            let args = if unit_input { Data::Null } else { args };
            let input = from_data::<I>(args).map_err(|_| CallFailure::Input);
            let output = call(input, info);
            Box::pin(async move {
                let output = output.await?;
                to_data(&output).map_err(|_| CallFailure::Output)
            }) as BoxFuture
        });
        Capability {
            name: name.into(),
            id: None,
            summary: String::new(),
            description: String::new(),
            search_terms: Vec::new(),
            input_schema,
            output_schema: Some(schema_for::<O>(
                SchemaSettings::draft2020_12().for_serialize(),
            )),
            source: SchemaSource::Derived,
            rules: Vec::new(),
            output_rules: Vec::new(),
            annotations: Annotations::default(),
            handler: Some(erased),
            schema_document: None,
        }
    }

    /// A capability described by JSON Schemas with no backend: search and
    /// describe show it, calling it is `capability failed`.
    pub fn from_schemas(
        name: impl Into<String>,
        input_schema: serde_json::Value,
        output_schema: Option<serde_json::Value>,
    ) -> Capability {
        Capability {
            name: name.into(),
            id: None,
            summary: String::new(),
            description: String::new(),
            search_terms: Vec::new(),
            input_schema,
            output_schema,
            source: SchemaSource::Manifest,
            rules: Vec::new(),
            output_rules: Vec::new(),
            annotations: Annotations::default(),
            handler: None,
            schema_document: None,
        }
    }

    /// A capability described by an upstream MCP server's JSON Schemas:
    /// like [`Capability::from_schemas`], but every field whose schema the
    /// notation cannot express is `any` instead of an error.
    pub fn from_upstream_schemas(
        name: impl Into<String>,
        input_schema: serde_json::Value,
        output_schema: Option<serde_json::Value>,
    ) -> Capability {
        Capability {
            source: SchemaSource::Upstream,
            ..Capability::from_schemas(name, input_schema, output_schema)
        }
    }

    /// Gives the capability a backend that takes the canonical arguments as
    /// JSON and returns an object (for capabilities described by schemas:
    /// manifests, upstream servers). A result that is not an object, has
    /// an integer outside i64 or does not fit the published output shape
    /// is `capability failed`.
    pub fn json_handler<F, Fut>(self, handler: F) -> Capability
    where
        F: Fn(serde_json::Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<serde_json::Value, HandlerError>> + Send + 'static,
    {
        self.json_handler_with_context(move |_, args| handler(args))
    }

    /// [`Capability::json_handler`] for a handler that also takes the
    /// call's [`CallContext`].
    pub fn json_handler_with_context<F, Fut>(mut self, handler: F) -> Capability
    where
        F: Fn(CallContext, serde_json::Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<serde_json::Value, HandlerError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.handler = Some(Arc::new(move |args: Data, info: &CallInfo<'_>| {
            let handler = handler.clone();
            let args = data_into_json(args);
            let context = info.to_context();
            Box::pin(async move {
                let output = handler(context, args).await.map_err(CallFailure::Handler)?;
                match Data::from_json(&output) {
                    Some(data @ Data::Map(_)) => Ok(data),
                    _ => Err(CallFailure::Output),
                }
            }) as BoxFuture
        }));
        self
    }

    /// Resolves local `$ref`s of the input and output schemas against
    /// `document` (an OpenAPI description whose operations refer to
    /// `#/components/schemas/...`) instead of against each schema.
    pub fn schema_document(mut self, document: Arc<serde_json::Value>) -> Capability {
        self.schema_document = Some(document);
        self
    }

    /// The stable ID used by policies and disabling.
    pub fn id(mut self, id: impl Into<String>) -> Capability {
        self.id = Some(id.into());
        self
    }

    /// The compact one-line summary search returns.
    pub fn summary(mut self, summary: impl Into<String>) -> Capability {
        self.summary = summary.into();
        self
    }

    /// The longer description describe returns.
    pub fn description(mut self, description: impl Into<String>) -> Capability {
        self.description = description.into();
        self
    }

    /// Extra search vocabulary.
    pub fn search_terms<S: Into<String>>(
        mut self,
        terms: impl IntoIterator<Item = S>,
    ) -> Capability {
        self.search_terms = terms.into_iter().map(Into::into).collect();
        self
    }

    /// Input rules on the field at `path` (`limit`, `filter.owner`,
    /// `tags[]` for list items, `labels{}` for map values).
    pub fn rule(mut self, path: &str, rules: impl IntoIterator<Item = Rule>) -> Capability {
        self.rules
            .extend(rules.into_iter().map(|r| (path.to_string(), r)));
        self
    }

    /// Output rules on the result field at `path` (same paths as
    /// [`Capability::rule`]), checked on every result after the handler
    /// returns: a violation is `capability failed` (and logged with the
    /// path). Like the typed tools guide's output schemas (section 11 of
    /// `docs/architecture.md`) they make nothing
    /// transactional: the handler's effects have happened.
    pub fn output_rule(mut self, path: &str, rules: impl IntoIterator<Item = Rule>) -> Capability {
        self.output_rules
            .extend(rules.into_iter().map(|r| (path.to_string(), r)));
        self
    }

    /// All four behaviour hints at once.
    pub fn annotations(mut self, annotations: Annotations) -> Capability {
        self.annotations = annotations;
        self
    }

    /// Whether calls only read (default false).
    pub fn read_only(mut self, yes: bool) -> Capability {
        self.annotations.read_only = yes;
        self
    }

    /// Whether a call may destroy or overwrite something (default true).
    pub fn destructive(mut self, yes: bool) -> Capability {
        self.annotations.destructive = yes;
        self
    }

    /// Whether repeating a call has no further effect (default false).
    pub fn idempotent(mut self, yes: bool) -> Capability {
        self.annotations.idempotent = yes;
        self
    }

    /// Whether calls reach beyond the host's own data (default true).
    pub fn open_world(mut self, yes: bool) -> Capability {
        self.annotations.open_world = yes;
        self
    }

    /// The behaviour hints.
    pub fn annotation_values(&self) -> Annotations {
        self.annotations
    }

    /// The dotted name as given.
    pub fn name(&self) -> &str {
        &self.name
    }
}
