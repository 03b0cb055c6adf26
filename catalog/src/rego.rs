//! Rego authorization policies on the regorus engine.
//!
//! A [`RegoPolicy`] is built from Rego modules, optional JSON data
//! documents and the path of the rule that decides (by default
//! `data.codemode.allow`). Each call is evaluated with the input
//! `{"subject": {"id", "attributes"}, "capability": {"id", "name",
//! "annotations": {"read_only", "destructive", "idempotent",
//! "open_world"}}, "arguments": {...canonical arguments}}` on a clone of
//! the prepared engine, so evaluations never share state. The rule's value
//! `true` allows; `false` or an undefined rule denies; the string `"ask"`
//! asks a person ([`Decision::Ask`]); any other value or an evaluation
//! error is a policy failure. Each evaluation is bounded in time by
//! regorus's cooperative timer: by the policy's own limit
//! ([`RegoPolicy::DEFAULT_TIME_LIMIT`] unless set) and by the execution's deadline,
//! whichever comes first; running out is an evaluation error. Nothing of
//! the policy (paths, rule names, messages) ever reaches a client.

use crate::annotations::Annotations;
use crate::auth::{AuthorizationRequest, Decision, Policy, PolicyError};
use crate::convert::data_to_json;
use regorus::utils::limits::ExecutionTimerConfig;
use serde_json::json;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// Work units regorus does between two looks at the clock.
const TIMER_CHECK_INTERVAL: u32 = 32;

/// A Rego policy could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid Rego policy: {0}")]
pub struct RegoError(pub String);

/// A Rego policy.
#[derive(Clone)]
pub struct RegoPolicy {
    engine: regorus::Engine,
    rule: String,
    time_limit: Duration,
}

impl std::fmt::Debug for RegoPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegoPolicy")
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

/// Collects the modules, data and rule of a [`RegoPolicy`].
#[derive(Default)]
pub struct RegoPolicyBuilder {
    modules: Vec<(String, String)>,
    data: Vec<serde_json::Value>,
    rule: Option<String>,
    time_limit: Option<Duration>,
}

impl RegoPolicyBuilder {
    /// Adds a Rego module; `path` names it in load errors.
    pub fn module(mut self, path: impl Into<String>, source: impl Into<String>) -> Self {
        self.modules.push((path.into(), source.into()));
        self
    }

    /// Adds a Rego module read from a file.
    pub fn module_file(self, path: impl AsRef<std::path::Path>) -> Result<Self, RegoError> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path)
            .map_err(|e| RegoError(format!("{}: {e}", path.display())))?;
        Ok(self.module(path.display().to_string(), source))
    }

    /// Adds a data document (merged under `data`).
    pub fn data(mut self, data: serde_json::Value) -> Self {
        self.data.push(data);
        self
    }

    /// Adds a data document read from a JSON file.
    pub fn data_file(self, path: impl AsRef<std::path::Path>) -> Result<Self, RegoError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| RegoError(format!("{}: {e}", path.display())))?;
        let value = serde_json::from_str(&text)
            .map_err(|e| RegoError(format!("{}: {e}", path.display())))?;
        Ok(self.data(value))
    }

    /// The rule that decides, e.g. `data.authz.allow`.
    pub fn rule(mut self, rule: impl Into<String>) -> Self {
        self.rule = Some(rule.into());
        self
    }

    /// The longest one evaluation may take (default
    /// [`RegoPolicy::DEFAULT_TIME_LIMIT`]); the execution's deadline may cut it shorter.
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// Parses the modules, loads the data and checks that the rule can be
    /// evaluated (within the time limit).
    pub fn build(self) -> Result<RegoPolicy, RegoError> {
        let mut engine = regorus::Engine::new();
        if self.modules.is_empty() {
            return Err(RegoError("no Rego module".into()));
        }
        for (path, source) in self.modules {
            engine
                .add_policy(path, source)
                .map_err(|e| RegoError(e.to_string()))?;
        }
        for data in self.data {
            engine
                .add_data(regorus::Value::from(data))
                .map_err(|e| RegoError(e.to_string()))?;
        }
        let policy = RegoPolicy {
            engine,
            rule: self
                .rule
                .unwrap_or_else(|| RegoPolicy::DEFAULT_RULE.to_string()),
            time_limit: self.time_limit.unwrap_or(RegoPolicy::DEFAULT_TIME_LIMIT),
        };
        let probe = json!({
            "subject": {"id": "", "attributes": {}},
            "capability": {"id": "", "name": "", "annotations": Annotations::default().to_json()},
            "arguments": {},
        });
        policy
            .evaluate(probe, None)
            .map_err(|e| RegoError(format!("rule {}: {}", policy.rule, e.0)))?;
        Ok(policy)
    }
}

impl RegoPolicy {
    /// The rule evaluated when none is configured.
    pub const DEFAULT_RULE: &str = "data.codemode.allow";

    /// The longest one evaluation may take when no limit is configured.
    pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(1);

    /// A builder.
    pub fn builder() -> RegoPolicyBuilder {
        RegoPolicyBuilder::default()
    }

    /// The rule that decides.
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// The time limit of one evaluation.
    pub fn time_limit(&self) -> Duration {
        self.time_limit
    }

    fn evaluate(
        &self,
        input: serde_json::Value,
        deadline: Option<Instant>,
    ) -> Result<Decision, PolicyError> {
        let limit = match deadline {
            Some(d) => self
                .time_limit
                .min(d.saturating_duration_since(Instant::now())),
            None => self.time_limit,
        };
        if limit.is_zero() {
            return Err(PolicyError("no time left to evaluate".into()));
        }
        let mut engine = self.engine.clone();
        engine.set_execution_timer_config(ExecutionTimerConfig {
            limit,
            check_interval: NonZeroU32::new(TIMER_CHECK_INTERVAL).unwrap_or(NonZeroU32::MIN),
        });
        engine.set_input(regorus::Value::from(input));
        let value = engine
            .eval_rule(self.rule.clone())
            .map_err(|e| PolicyError(e.to_string()))?;
        match value {
            regorus::Value::Bool(true) => Ok(Decision::Allow),
            regorus::Value::Bool(false) | regorus::Value::Undefined => Ok(Decision::Deny),
            regorus::Value::String(s) if s.as_ref() == "ask" => Ok(Decision::Ask),
            _ => Err(PolicyError(
                "the rule is neither a boolean nor \"ask\"".into(),
            )),
        }
    }
}

impl Policy for RegoPolicy {
    fn authorize(&self, request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        let input = json!({
            "subject": {
                "id": request.subject.id(),
                "attributes": request.subject.attributes(),
            },
            "capability": {
                "id": request.capability_id.as_str(),
                "name": request.name.as_str(),
                "annotations": request.annotations.to_json(),
            },
            "arguments": data_to_json(request.arguments),
        });
        self.evaluate(input, request.deadline)
    }
}
