//! Catalog sources: the built-in catalogs (`demo`, `conformance`) and JSON
//! manifests, and [`load`], which builds one [`CodeMode`] service from a
//! list of them, exactly as every command of the binary does.
//!
//! Each source brings its capabilities, the IDs it disables and its
//! authorization policy, which rules on its own capabilities and allows the
//! rest; the combined policy allows a call only when every source's policy
//! does (a failure of any is a failure). Manifest entries have no backend
//! and are allowed (calling them is `capability failed`).

pub mod conformance;
pub mod demo;

use codemode_catalog::{
    AllowAll, AuthorizationRequest, Catalog, CodeMode, Config, Decision, Manifest, Policy,
    PolicyError,
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

/// Builds the service over the catalogs named by `sources` (built-in names
/// or manifest paths), with `disabled` IDs disabled on top of the sources'
/// own, and `config`.
pub fn load(
    sources: &[String],
    disabled: &[String],
    config: Config,
) -> Result<CodeMode, LoadError> {
    let mut builder = Catalog::builder();
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
        builder = builder.capabilities(caps);
        for id in own_disabled {
            builder = builder.disable(id);
        }
    }
    for id in disabled {
        builder = builder.disable(id.clone());
    }
    let catalog = builder.build()?;
    let policy = AllPolicies(policies);
    Ok(CodeMode::with_config(catalog, Arc::new(policy), config))
}

fn read_manifest(path: &Path) -> Result<Manifest, LoadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| LoadError::Read {
        path: shown.clone(),
        error,
    })?;
    Manifest::from_json(&text).map_err(|error| LoadError::Manifest { path: shown, error })
}

/// Allows a call only when every policy allows it.
struct AllPolicies(Vec<Arc<dyn Policy>>);

impl Policy for AllPolicies {
    fn authorize(&self, request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        let mut decision = Decision::Allow;
        for policy in &self.0 {
            if policy.authorize(request)? == Decision::Deny {
                decision = Decision::Deny;
            }
        }
        Ok(decision)
    }
}
