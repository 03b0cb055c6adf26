//! Telemetry of tool calls: metrics in the Prometheus text format.
//!
//! [`Metrics`] counts calls and records their durations by tool and
//! outcome, on the official Prometheus client (`prometheus-client`):
//! `codemode_tool_calls_total{tool, outcome}` and the histogram
//! `codemode_tool_call_duration_seconds{tool, outcome}`. The tool label is
//! one of the three tools (`unknown` for any other name, so a client cannot
//! grow the label set); the outcome is `ok`, `invalid_params` or the error
//! class of the fixed error text (`permission_denied`, `context_canceled`,
//! …). Nothing else is recorded: never arguments, source, results or
//! subjects. [`Metrics::encode`] renders the text exposition (version
//! 0.0.4) that the HTTP listener serves at `/metrics` when the
//! configuration enables it (or a listener of its own, `[telemetry]
//! listen`, for a stdio server); an embedding host that has its own
//! Prometheus registry registers the same series there instead
//! ([`Metrics::register_in`]). The tracing span of each call lives in the
//! adapter (`mcp`).
//!
//! Beside the calls, the gauges of the service's executions, read on each
//! scrape from the service the metrics watch ([`Metrics::watch`]):
//! `codemode_executions_open`, `codemode_executions_running` (on a CPU
//! slot), `codemode_executions_paused` (awaiting a capability call) and
//! `codemode_executions_heap_bytes` (the heap the open executions hold).
//! An I/O-bound deployment scales on open executions: CPU stays low while
//! every program waits on its capabilities.

use codemode_catalog::{CodeMode, Error};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The `Content-Type` of the exposition.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Upper bounds of the duration buckets, in seconds (100 µs to 60 s).
const BUCKETS: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// The labels of one series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: &'static str,
    outcome: &'static str,
}

type Durations = Family<CallLabels, Histogram, fn() -> Histogram>;

fn new_histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// The metrics of one server; clones share them.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    calls: Family<CallLabels, Counter>,
    durations: Durations,
    executions: Arc<Executions>,
}

/// The gauges of the executions of the watched service, if any.
#[derive(Default)]
struct Executions(OnceLock<CodeMode>);

impl std::fmt::Debug for Executions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executions").finish_non_exhaustive()
    }
}

impl Collector for Executions {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(service) = self.0.get() else {
            return Ok(());
        };
        let counts = service.execution_counts();
        let gauges: [(&str, &str, usize); 4] = [
            (
                "executions_open",
                "Executions open: running, paused at a capability call, or waiting for a CPU slot",
                counts.open,
            ),
            (
                "executions_running",
                "Executions running instructions on a CPU slot",
                counts.running,
            ),
            (
                "executions_paused",
                "Executions paused at a capability call, awaiting it",
                counts.paused,
            ),
            (
                "executions_heap_bytes",
                "Heap bytes held by the open executions",
                counts.heap_bytes,
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
            let metric = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
            gauge.encode(metric)?;
        }
        Ok(())
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Metrics {
        Metrics {
            inner: Arc::new(Inner {
                calls: Family::default(),
                durations: Family::new_with_constructor(new_histogram),
                executions: Arc::default(),
            }),
        }
    }

    /// Empty metrics whose series are also registered in a host's own
    /// `registry`, under the prefix `codemode` (the host serves them with
    /// the rest of its metrics).
    pub fn register_in(registry: &mut Registry) -> Metrics {
        let metrics = Metrics::new();
        metrics.register(registry.sub_registry_with_prefix("codemode"));
        metrics
    }

    /// Exports the execution gauges of `service` (the first service
    /// watched; later ones are ignored).
    pub fn watch(&self, service: &CodeMode) {
        let _ = self.inner.executions.0.set(service.clone());
    }

    /// Registers the series (sharing their values) in `registry`.
    fn register(&self, registry: &mut Registry) {
        registry.register_collector(Box::new(self.inner.executions.clone()));
        registry.register(
            "tool_calls",
            "MCP tool calls by tool and outcome",
            self.inner.calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "Duration of MCP tool calls by tool and outcome",
            self.inner.durations.clone(),
        );
    }

    /// Records one call of `tool` that ended with `outcome` after `elapsed`.
    pub fn record(&self, tool: &str, outcome: &'static str, elapsed: Duration) {
        let labels = CallLabels {
            tool: tool_label(tool),
            outcome,
        };
        self.inner.calls.get_or_create(&labels).inc();
        self.inner
            .durations
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// The Prometheus text exposition of every series.
    pub fn encode(&self) -> String {
        let mut registry = Registry::with_prefix("codemode");
        self.register(&mut registry);
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &registry);
        text
    }
}

/// The label of a tool name: one of the three tools, else `unknown`.
fn tool_label(tool: &str) -> &'static str {
    crate::tool::Tool::from_name(tool).map_or("unknown", crate::tool::Tool::name)
}

/// The outcome label of a tool error: its class, never its detail.
pub fn error_outcome(error: &Error) -> &'static str {
    match error {
        Error::Unauthenticated => "unauthenticated",
        Error::CapabilityNotFound => "capability_not_found",
        Error::InvalidProgram(_) => "invalid_program",
        Error::InvalidArguments(_) => "invalid_capability_arguments",
        Error::PermissionDenied => "permission_denied",
        Error::PolicyFailure => "authorization_policy_failure",
        Error::ResourceLimitExceeded => "resource_limit_exceeded",
        Error::CapabilityFailed(_) => "capability_failed",
        Error::Canceled => "context_canceled",
        Error::DeadlineExceeded => "context_deadline_exceeded",
        Error::Internal => "internal_failure",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_durations_by_tool_and_outcome() {
        let metrics = Metrics::new();
        metrics.record("execute", "ok", Duration::from_micros(300));
        metrics.record("execute", "ok", Duration::from_millis(2));
        metrics.record(
            "search_api",
            error_outcome(&Error::ResourceLimitExceeded),
            Duration::from_micros(50),
        );
        metrics.record("no such tool", "invalid_params", Duration::ZERO);
        let text = metrics.encode();
        for line in [
            "# TYPE codemode_tool_calls_total counter",
            "codemode_tool_calls_total{tool=\"execute\",outcome=\"ok\"} 2",
            "codemode_tool_calls_total{tool=\"search_api\",outcome=\"resource_limit_exceeded\"} 1",
            "codemode_tool_calls_total{tool=\"unknown\",outcome=\"invalid_params\"} 1",
            "# TYPE codemode_tool_call_duration_seconds histogram",
            "codemode_tool_call_duration_seconds_count{tool=\"execute\",outcome=\"ok\"} 2",
            "codemode_tool_call_duration_seconds_bucket{tool=\"execute\",outcome=\"ok\",le=\"0.0005\"} 1",
            "codemode_tool_call_duration_seconds_bucket{tool=\"execute\",outcome=\"ok\",le=\"0.0025\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} missing in\n{text}");
        }
        assert!(!text.contains("no such tool"));
    }

    #[test]
    fn a_hosts_registry_gets_the_same_series() {
        let mut registry = Registry::default();
        let metrics = Metrics::register_in(&mut registry);
        metrics.record("describe_api", "ok", Duration::from_micros(10));
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).unwrap();
        let line = "codemode_tool_calls_total{tool=\"describe_api\",outcome=\"ok\"} 1";
        assert!(text.lines().any(|l| l == line), "{text}");
        assert!(metrics.encode().lines().any(|l| l == line));
    }

    #[test]
    fn gauges_count_the_watched_services_executions() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let service = crate::catalogs::load(
            &["conformance".to_string()],
            &[],
            codemode_catalog::Config::default(),
        )
        .unwrap();
        let metrics = Metrics::new();
        let gauge = |text: &str, name: &str| {
            let prefix = format!("codemode_executions_{name} ");
            text.lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .map(|v| v.parse::<u64>().unwrap())
        };
        // Nothing watched: no gauges.
        assert_eq!(gauge(&metrics.encode(), "open"), None);
        metrics.watch(&service);
        let text = metrics.encode();
        assert!(
            text.contains("# TYPE codemode_executions_open gauge"),
            "{text}"
        );
        assert_eq!(gauge(&text, "open"), Some(0));
        runtime.block_on(async {
            let paused = {
                let service = service.clone();
                tokio::spawn(async move {
                    let source = "def main():\n    big = [str(i) for i in range(1000)]\n    return conformance.sleep(ms=300)\n";
                    service
                        .execute(
                            &codemode_catalog::Subject::new("t"),
                            source,
                            codemode_catalog::ExecuteOptions::default(),
                        )
                        .await
                })
            };
            tokio::time::sleep(Duration::from_millis(150)).await;
            let text = metrics.encode();
            assert_eq!(gauge(&text, "open"), Some(1), "{text}");
            assert_eq!(gauge(&text, "paused"), Some(1));
            assert_eq!(gauge(&text, "running"), Some(0));
            assert!(gauge(&text, "heap_bytes").unwrap() >= 32 << 10);
            paused.await.unwrap().unwrap();
        });
        let text = metrics.encode();
        for name in ["open", "running", "paused", "heap_bytes"] {
            assert_eq!(gauge(&text, name), Some(0), "{name}");
        }
    }

    #[test]
    fn every_error_has_a_distinct_outcome() {
        let errors = [
            Error::Unauthenticated,
            Error::CapabilityNotFound,
            Error::InvalidProgram(Some("detail".into())),
            Error::InvalidArguments(None),
            Error::PermissionDenied,
            Error::PolicyFailure,
            Error::ResourceLimitExceeded,
            Error::CapabilityFailed(Some("public".into())),
            Error::Canceled,
            Error::DeadlineExceeded,
            Error::Internal,
        ];
        let mut outcomes: Vec<_> = errors.iter().map(error_outcome).collect();
        // Each outcome is the error text's class in snake case.
        for (e, o) in errors.iter().zip(&outcomes) {
            let class = e.to_string();
            let class = class
                .split(':')
                .next()
                .unwrap_or_default()
                .replace(' ', "_");
            assert_eq!(&class, o);
        }
        outcomes.sort_unstable();
        outcomes.dedup();
        assert_eq!(outcomes.len(), errors.len());
    }
}
