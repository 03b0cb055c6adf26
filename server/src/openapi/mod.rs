//! Code mode over REST APIs: every operation of a configured OpenAPI
//! description becomes a capability that `execute` calls over HTTP.
//!
//! A source is configured with `--openapi NAME=SPEC` or an `[[openapi]]`
//! table ([`config`]). [`load`] reads each document once at start
//! ([`document`]: JSON or YAML, OpenAPI 3.0 or 3.1, local references
//! checked and bounded), reads its operations ([`operation`]), keeps those
//! the `include`/`exclude` globs admit, and imports them as capabilities
//! named `NAME.<operation>` with IDs `openapi.NAME.<operationId>`
//! ([`import`]); each source gets one HTTP client ([`call::ApiClient`]). Any problem
//! with a document is a start-up error naming the file and the place.
//! Calls go through binding, authorization and the budgets like every
//! capability's; the handler writes the request, sends it under the
//! execution's deadline and cancellation, and conforms the answer to the
//! published output shape as upstream results are.

pub mod call;
pub mod config;
pub mod document;
pub mod import;
pub mod operation;

pub use config::{
    collect, process_env, Filter, HttpVersion, OpenApiConfig, OpenApiConfigError, OpenApiSource,
    Spec,
};
pub use import::ImportedOperation;

pub use document::DocumentError;
use std::sync::Arc;

/// Why the OpenAPI sources cannot be imported (a start-up error).
#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    #[error(transparent)]
    Config(#[from] OpenApiConfigError),
    #[error("openapi {0:?}: {1}")]
    Document(String, DocumentError),
    #[error("openapi {0:?}: {1}")]
    BaseUrl(String, String),
    #[error("openapi {0:?}: cannot create the HTTP client: {1}")]
    Client(String, reqwest::Error),
    #[error("openapi {0:?}: the name is already the root of capability {1:?}")]
    Root(String, String),
}

/// Imports every source: the capabilities of all admitted operations, in
/// source order. `max_value_bytes` bounds each response body;
/// `native_names` are the capabilities already in the catalog, whose roots
/// a source may not take.
pub async fn load<'a>(
    sources: &[OpenApiSource],
    max_value_bytes: usize,
    native_names: impl IntoIterator<Item = &'a str> + Clone,
) -> Result<Vec<ImportedOperation>, OpenApiError> {
    let mut out = Vec::new();
    for source in sources {
        let clash = native_names
            .clone()
            .into_iter()
            .find(|n| n.split('.').next() == Some(source.name.as_str()));
        if let Some(cap) = clash {
            return Err(OpenApiError::Root(source.name.clone(), cap.to_string()));
        }
        let started = std::time::Instant::now();
        let text = document::read(&source.spec)
            .await
            .map_err(|e| OpenApiError::Document(source.name.clone(), e))?;
        let imported = load_text(source, &text, max_value_bytes)?;
        tracing::info!(
            openapi = %source.name,
            spec = %source.spec,
            "imported {} operations in {:?}",
            imported.len(),
            started.elapsed()
        );
        out.extend(imported);
    }
    Ok(out)
}

/// Imports one source from the text of its document.
pub fn load_text(
    source: &OpenApiSource,
    text: &str,
    max_value_bytes: usize,
) -> Result<Vec<ImportedOperation>, OpenApiError> {
    let name = &source.name;
    let file = source.spec.to_string();
    let doc = document::parse(&file, text).map_err(|e| OpenApiError::Document(name.clone(), e))?;
    let operations =
        operation::operations(&doc).map_err(|e| OpenApiError::Document(name.clone(), e))?;
    let operations: Vec<_> = operations
        .into_iter()
        .filter(|op| source.filter.admits(&op.key()))
        .collect();
    let base = match &source.base_url {
        Some(base) => base.clone(),
        None => server_url(&doc.root, &source.spec)
            .map_err(|why| OpenApiError::BaseUrl(name.clone(), why))?,
    };
    let client = call::ApiClient::new(&base, source.headers.clone(), max_value_bytes, source.http)
        .map_err(|why| OpenApiError::Client(name.clone(), why))?;
    let document = Arc::new(doc.root);
    Ok(import::import(
        name,
        &document,
        operations,
        &Arc::new(client),
    ))
}

/// The document's first `servers[].url`, its variables replaced by their
/// defaults; a relative one is resolved against the document's URL.
fn server_url(root: &serde_json::Value, spec: &Spec) -> Result<String, String> {
    let server = root
        .get("servers")
        .and_then(|s| s.get(0))
        .ok_or("the document has no servers[].url; set base_url")?;
    let mut url = server
        .get("url")
        .and_then(|u| u.as_str())
        .ok_or("servers[0].url is not a string")?
        .to_string();
    if let Some(vars) = server.get("variables").and_then(|v| v.as_object()) {
        for (var, def) in vars {
            if let Some(default) = def.get("default").and_then(|d| d.as_str()) {
                url = url.replace(&format!("{{{var}}}"), default);
            }
        }
    }
    let parsed = match url::Url::parse(&url) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => match spec {
            Spec::Url(base) => url::Url::parse(base)
                .and_then(|b| b.join(&url))
                .map_err(|e| format!("servers[0].url {url:?}: {e}"))?,
            Spec::File(_) => {
                return Err(format!(
                    "servers[0].url {url:?} is relative to a file; set base_url"
                ))
            }
        },
        Err(e) => return Err(format!("servers[0].url {url:?}: {e}")),
    };
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(format!("servers[0].url {url:?} is not an http(s) URL"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("servers[0].url carries userinfo (user:password@); set base_url".into());
    }
    Ok(parsed.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_url_with_userinfo_is_refused_unshown() {
        let spec = Spec::File("x.json".into());
        let root = serde_json::json!({"servers": [{"url": "https://bob:pw@h/v1"}]});
        let e = server_url(&root, &spec).expect_err("refused");
        assert!(e.contains("userinfo") && !e.contains("pw"), "{e}");
        let root = serde_json::json!({"servers": [{"url": "https://h/v1"}]});
        assert_eq!(server_url(&root, &spec), Ok("https://h/v1".into()));
    }
}
