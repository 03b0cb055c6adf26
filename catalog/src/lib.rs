//! codemode-catalog: capabilities, their field shapes, argument binding,
//! search, describe, authorization and the CodeMode service.
//!
//! A host defines [`Capability`]s (typed Rust handlers whose input and
//! output shapes are derived from their serde types, or manifest entries),
//! builds an immutable [`Catalog`] that validates everything up front, and
//! serves it through [`CodeMode`] with a [`Policy`] and a [`Config`].
//! Failures are one [`Error`] whose text is one of the fixed texts of
//! `docs/architecture.md`, section 5. The public API is what this file
//! re-exports; every module is private to the crate.
//!
//! ```
//! use codemode_catalog::{
//!     AllowAll, Capability, Catalog, CodeMode, ExecuteOptions, HandlerError, Rule, Subject,
//! };
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct QuoteRequest {
//!     weight_grams: i64,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Quote {
//!     price_cents: i64,
//! }
//!
//! async fn quote(input: QuoteRequest) -> Result<Quote, HandlerError> {
//!     let price_cents = if input.weight_grams > 1000 { 900 } else { 500 };
//!     Ok(Quote { price_cents })
//! }
//!
//! let catalog = Catalog::builder()
//!     .capability(
//!         Capability::new("shipping.quote", quote)
//!             .summary("Quote domestic shipping in cents.")
//!             .description("Parcels of 1-5000 grams; 500 cents up to 1000 g, else 900.")
//!             .rule("weight_grams", Rule::range(1, 5000)),
//!     )
//!     .build()
//!     .expect("a valid catalog");
//! let service = CodeMode::new(catalog, AllowAll);
//! let runtime = tokio::runtime::Runtime::new().expect("a runtime");
//! runtime.block_on(async {
//!     let me = Subject::new("local");
//!     let found = service.search(&me, "shipping quote").await.expect("search");
//!     assert_eq!(found.results[0].signature, "shipping.quote(*, weight_grams: int)");
//!     let source = "def main():\n    return shipping.quote(weight_grams=1200)\n";
//!     let result = service.execute(&me, source, ExecuteOptions::default()).await;
//!     assert_eq!(result.expect("runs").to_json_string(), r#"{"price_cents":900}"#);
//!     let source = "def main():\n    return shipping.quote(weight_grams=0)\n";
//!     let error = service.execute(&me, source, ExecuteOptions::default()).await;
//!     assert_eq!(
//!         error.expect_err("out of range").to_string(),
//!         "invalid capability arguments: weight_grams: must be at least 1"
//!     );
//! });
//! ```

// A public type that a caller could not name is a re-export missing below.
#![warn(unnameable_types)]

pub(crate) mod admission;
pub(crate) mod annotations;
pub(crate) mod approval;
pub(crate) mod auth;
pub(crate) mod binding;
pub(crate) mod capability;
pub(crate) mod catalog;
pub(crate) mod conform;
pub(crate) mod convert;
mod cpu;
pub(crate) mod decode;
pub(crate) mod error;
pub(crate) mod names;
pub(crate) mod progress;
#[cfg(feature = "rego")]
pub(crate) mod rego;
pub(crate) mod schema;
pub(crate) mod search;
pub(crate) mod service;
pub(crate) mod shape;
pub(crate) mod strict_json;

pub use annotations::Annotations;
pub use approval::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, ApproverFn, RefuseAll,
    MAX_SHOWN_ARGUMENT_BYTES, MAX_SHOWN_VALUE_BYTES,
};
pub use auth::{
    AllowAll, AuthorizationRequest, Decision, DenyAll, FixedSubject, Policy, PolicyError, PolicyFn,
    Subject, SubjectResolver, Unauthenticated,
};
pub use binding::{bind, BindError};
pub use capability::{CallContext, Capability, HandlerError, MAX_PUBLIC_MESSAGE_BYTES};
pub use catalog::{
    BuildError, CapabilityRef, Catalog, CatalogBuilder, Description, Manifest, ManifestEntry,
    ManifestError, NotFound, Problem, RuleError,
};
pub use codemode_vm::{Data, Limits};
pub use conform::{conform_output, Mismatch};
pub use convert::{data_to_json, to_data, ConvertError};
pub use error::Error;
pub use names::{is_reserved_root, CapabilityId, CapabilityName, NameError};
pub use progress::{CallDone, Progress, ProgressFuture};
#[cfg(feature = "rego")]
pub use rego::{RegoError, RegoPolicy, RegoPolicyBuilder};
pub use schema::{fields_from_schema, fields_from_schema_in, SchemaSource, ShapeError};
pub use search::{tokenize, SearchError, SearchLimits, SearchResponse, SearchResult};
pub use service::{CodeMode, Config, ExecuteOptions, ExecutionCounts};
pub use shape::{FieldSchema, FieldShape, Number, Rule, Shape, ShapeKind};
pub use strict_json::{duplicate_member, parse_strict, JsonError, Strict};
pub use tokio_util::sync::CancellationToken;

/// An input type for capabilities that take no arguments.
#[derive(Clone, Copy, Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}
