//! Tools imported from other systems need an explicit policy when the
//! server authenticates subjects.
//!
//! An imported tool (an upstream MCP server's today; every other kind of
//! imported source the same way) runs with this server's own credentials —
//! its child process, its headers — and, without a policy, is allowed for
//! every subject. Once `[[http.tokens]]` name subjects, that is a decision
//! the operator has to write down: [`require_policy`] refuses to serve
//! unless the configuration has a `[policy]` (a Rego module, or
//! `allow_all = true`), and its error names the keys involved. A source kind
//! added later is one more entry in [`imported_sources`].

use crate::config::FileConfig;

/// The configuration keys (and flags) in use that import tools into the
/// catalog.
pub fn imported_sources(
    file: &FileConfig,
    flag_upstreams: &[String],
    flag_openapi: &[String],
) -> Vec<&'static str> {
    let mut keys = Vec::new();
    if !file.upstream.is_empty() {
        keys.push("[[upstream]]");
    }
    if !flag_upstreams.is_empty() {
        keys.push("--upstream");
    }
    if !file.openapi.is_empty() {
        keys.push("[[openapi]]");
    }
    if !flag_openapi.is_empty() {
        keys.push("--openapi");
    }
    keys
}

/// Tokens name subjects and `sources` import tools, but no `[policy]`
/// decides who may call them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "[[http.tokens]] authenticate subjects and {} import tools that run with this \
     server's credentials: decide who may call them with [policy] file = \"<rego module>\", \
     or allow every subject explicitly with [policy] allow_all = true",
    .sources.join(" and ")
)]
pub struct PolicyRequired {
    /// The configuration keys and flags that import tools.
    pub sources: Vec<&'static str>,
}

/// Refuses tokens with imported sources and no `[policy]` table.
pub fn require_policy(
    file: &FileConfig,
    flag_upstreams: &[String],
    flag_openapi: &[String],
) -> Result<(), PolicyRequired> {
    let sources = imported_sources(file, flag_upstreams, flag_openapi);
    if file.http.tokens.is_empty() || sources.is_empty() || file.policy.is_some() {
        return Ok(());
    }
    Err(PolicyRequired { sources })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "[[http.tokens]]\nsubject = \"alice\"\n\
        sha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n";
    const UPSTREAM: &str = "[[upstream]]\nname = \"fs\"\ncommand = [\"srv\"]\n";

    fn check(text: &str, flags: &[&str]) -> Result<(), String> {
        check_with(text, flags, &[])
    }

    fn check_with(text: &str, upstreams: &[&str], openapi: &[&str]) -> Result<(), String> {
        let file = FileConfig::from_toml(text).expect("valid TOML");
        let owned = |v: &[&str]| v.iter().map(|f| f.to_string()).collect::<Vec<String>>();
        require_policy(&file, &owned(upstreams), &owned(openapi)).map_err(|e| e.to_string())
    }

    #[test]
    fn the_refusal_names_the_keys_that_import() {
        let file = FileConfig::from_toml(&format!("{TOKEN}{UPSTREAM}")).expect("valid TOML");
        let e = require_policy(&file, &[], &["p=x.json".into()]).expect_err("refused");
        assert_eq!(e.sources, ["[[upstream]]", "--openapi"]);
    }

    #[test]
    fn tokens_with_imported_tools_need_a_policy() {
        let e = check(&format!("{TOKEN}{UPSTREAM}"), &[]).expect_err("refused");
        assert_eq!(
            e,
            "[[http.tokens]] authenticate subjects and [[upstream]] import tools that run with \
             this server's credentials: decide who may call them with [policy] file = \
             \"<rego module>\", or allow every subject explicitly with [policy] allow_all = true"
        );
        let e = check(&format!("{TOKEN}{UPSTREAM}"), &["x=srv"]).expect_err("refused");
        assert!(e.contains("[[upstream]] and --upstream import"), "{e}");
        let e = check(TOKEN, &["x=srv"]).expect_err("refused");
        assert!(e.contains("and --upstream import"), "{e}");
        let allowed = format!("{TOKEN}[policy]\nallow_all = true\n{UPSTREAM}");
        assert_eq!(check(&allowed, &[]), Ok(()));
        let rego = format!("{TOKEN}[policy]\nfile = \"p.rego\"\n{UPSTREAM}");
        assert_eq!(check(&rego, &[]), Ok(()));
        // Without tokens every request is the local subject; without
        // imported tools the catalogs' own policies decide.
        assert_eq!(check(UPSTREAM, &["x=srv"]), Ok(()));
        assert_eq!(check(TOKEN, &[]), Ok(()));
    }

    #[test]
    fn openapi_documents_are_imported_sources_too() {
        let openapi = "[[openapi]]\nname = \"pets\"\nspec = \"pets.json\"\n";
        let e = check_with(&format!("{TOKEN}{openapi}"), &[], &[]).expect_err("refused");
        assert!(e.contains("and [[openapi]] import tools"), "{e}");
        let e = check_with(TOKEN, &[], &["pets=pets.json"]).expect_err("refused");
        assert!(e.contains("and --openapi import tools"), "{e}");
        let allowed = format!("{TOKEN}[policy]\nallow_all = true\n{openapi}");
        assert_eq!(check_with(&allowed, &[], &["p=x.json"]), Ok(()));
    }
}
