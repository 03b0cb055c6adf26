//! Catalog sources: the built-in catalogs (`demo`, `conformance`) and JSON
//! manifests, and [`load`], which builds one [`CodeMode`] service from a
//! list of them, exactly as every command of the binary does. [`sources`]
//! gives the same capabilities, disabled IDs and policy unbuilt, for a
//! catalog that upstream servers extend ([`crate::upstream`]).
//!
//! Each source brings its capabilities, the IDs it disables and its
//! authorization policy, which rules on its own capabilities and allows the
//! rest; the combined policy allows a call only when every source's policy
//! does (a failure of any is a failure). Manifest entries have no backend
//! and are allowed (calling them is `capability failed`).

pub mod conformance;
pub mod demo;

use codemode_catalog::{
    AllowAll, AuthorizationRequest, Capability, Catalog, CodeMode, Config, Decision, Manifest,
    Policy, PolicyError,
};
use std::path::Path;
use std::sync::Arc;

/// The names of the built-in catalogs.
pub const BUILTIN: &[&str] = &["demo", "conformance"];

/// Loading the catalogs failed (a host-side error, never sent to clients).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A manifest file could not be read.
    #[error("cannot read manifest {path}: {error}")]
    Read { path: String, error: std::io::Error },
    /// A manifest file is not a valid manifest.
    #[error("{path}: {error}")]
    Manifest {
        path: String,
        error: codemode_catalog::ManifestError,
    },
    /// The combined catalog is invalid.
    #[error(transparent)]
    Build(#[from] codemode_catalog::BuildError),
}

/// The capabilities of a list of sources, unbuilt.
#[derive(Clone)]
pub struct Sources {
    /// Every capability of every source.
    pub capabilities: Vec<Capability>,
    /// The IDs to disable: the sources' own and the configured ones.
    pub disabled: Vec<String>,
    /// The combined policy of the sources.
    pub policy: Arc<dyn Policy>,
}

impl Sources {
    /// Builds the catalog of these sources plus `extra` capabilities.
    pub fn build_with(
        &self,
        extra: impl IntoIterator<Item = Capability>,
    ) -> Result<Catalog, codemode_catalog::BuildError> {
        let mut builder = Catalog::builder()
            .capabilities(self.capabilities.iter().cloned())
            .capabilities(extra);
        for id in &self.disabled {
            builder = builder.disable(id.clone());
        }
        builder.build()
    }
}

/// Builds the service over the catalogs named by `sources` (built-in names
/// or manifest paths), with `disabled` IDs disabled on top of the sources'
/// own, and `config`.
pub fn load(
    sources: &[String],
    disabled: &[String],
    config: Config,
) -> Result<CodeMode, LoadError> {
    let parts = self::sources(sources, disabled)?;
    let catalog = parts.build_with([])?;
    Ok(CodeMode::with_config(catalog, parts.policy, config))
}

/// Reads the sources named (built-in names or manifest paths), with
/// `disabled` IDs added to the sources' own.
pub fn sources(sources: &[String], disabled: &[String]) -> Result<Sources, LoadError> {
    let mut capabilities = Vec::new();
    let mut all_disabled = Vec::new();
    let mut policies: Vec<Arc<dyn Policy>> = Vec::new();
    for source in sources {
        let (caps, own_disabled, policy): (_, Vec<&str>, Arc<dyn Policy>) = match source.as_str() {
            "demo" => (demo::capabilities(), Vec::new(), Arc::new(AllowAll)),
            "conformance" => (
                conformance::capabilities(),
                conformance::disabled(),
                Arc::new(conformance::policy()),
            ),
            path => {
                let manifest = read_manifest(Path::new(path))?;
                let caps = manifest
                    .capabilities
                    .into_iter()
                    .map(|e| e.into_capability())
                    .collect();
                (caps, Vec::new(), Arc::new(AllowAll))
            }
        };
        policies.push(policy);
        capabilities.extend(caps);
        all_disabled.extend(own_disabled.into_iter().map(str::to_string));
    }
    all_disabled.extend(disabled.iter().cloned());
    Ok(Sources {
        capabilities,
        disabled: all_disabled,
        policy: Arc::new(AllPolicies(policies)),
    })
}

fn read_manifest(path: &Path) -> Result<Manifest, LoadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| LoadError::Read {
        path: shown.clone(),
        error,
    })?;
    Manifest::from_json(&text).map_err(|error| LoadError::Manifest { path: shown, error })
}

/// A policy that allows a call only when every one of `policies` allows
/// it, asks when none denies and one asks (a failure of any is a
/// failure).
pub fn all_of(policies: Vec<Arc<dyn Policy>>) -> Arc<dyn Policy> {
    Arc::new(AllPolicies(policies))
}

/// Allows a call only when every policy allows it.
struct AllPolicies(Vec<Arc<dyn Policy>>);

impl Policy for AllPolicies {
    fn authorize(&self, request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        let mut decision = Decision::Allow;
        for policy in &self.0 {
            decision = decision.and(policy.authorize(request)?);
        }
        Ok(decision)
    }
}
