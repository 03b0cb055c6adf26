//! Search over the enabled capabilities, exactly as the tool reference
//! specifies it.
//!
//! [`tokenize`] splits text at every rune that is not a letter or digit,
//! then inside a word at camel-case humps (only when the word starts with a
//! lower-case letter: `createReview` → create, review, but `GitHub` →
//! github), before the last capital of an acronym followed by a word
//! (`HTTPServer` → http, server; a plural `URLs` stays whole) and at
//! letter/digit transitions, and lower-cases. The [`SearchIndex`] is built
//! once per catalog: a sorted vocabulary whose postings say in which fields
//! (name, search terms, summary, description) each capability has the
//! token, so exact lookups are a binary search and prefix lookups a range.
//! A query token's contribution to a capability is the strongest of its
//! matches (field weight, exact above prefix) times its rarity (idf); a
//! bonus prefers capabilities whose name and summary the query covers most
//! fully. Eligibility, ordering, count and byte bounds follow the
//! reference.

use crate::catalog::Entry;
use serde::Serialize;
use std::collections::HashMap;

/// The connector words removed from queries (and ignored in capabilities).
pub const CONNECTORS: &[&str] = &[
    "a", "an", "and", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with",
];

/// Search bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchLimits {
    /// Raw query bytes, before trimming (MaxSearchQueryBytes).
    pub max_query_bytes: usize,
    /// Distinct normalized query tokens.
    pub max_query_tokens: usize,
    /// Results per search (MaxSearchResults).
    pub max_results: usize,
    /// Compact JSON bytes of `{results, truncated}`.
    pub max_response_bytes: usize,
}

impl Default for SearchLimits {
    fn default() -> SearchLimits {
        SearchLimits {
            max_query_bytes: 256,
            max_query_tokens: 16,
            max_results: 20,
            max_response_bytes: 64 << 10,
        }
    }
}

/// A query exceeded a bound (`resource limit exceeded`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("resource limit exceeded")]
    QueryTooLong,
    #[error("resource limit exceeded")]
    TooManyTokens,
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SearchResult {
    pub name: String,
    pub signature: String,
    pub summary: String,
}

/// The structured output of search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SearchResponse {
    pub results: Vec<SearchResult>,
    pub truncated: bool,
}

impl SearchResponse {
    /// `{"results":[],"truncated":false}`.
    pub fn empty() -> SearchResponse {
        SearchResponse {
            results: Vec::new(),
            truncated: false,
        }
    }
}

/// Splits `text` into normalized tokens (duplicates and connectors kept).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_token(text, |t| out.push(t.to_string()));
    out
}

/// Calls `f` with each normalized token of `text`, without allocating per
/// token.
fn each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut word: Vec<char> = Vec::new();
    let mut buf = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() {
            word.push(c);
        } else if !word.is_empty() {
            split_word(&word, &mut buf, &mut f);
            word.clear();
        }
    }
}

fn split_word(w: &[char], buf: &mut String, f: &mut impl FnMut(&str)) {
    let lower_start = w[0].is_lowercase();
    let mut emit = |part: &[char]| {
        buf.clear();
        buf.extend(part.iter().flat_map(|c| c.to_lowercase()));
        f(buf);
    };
    let mut start = 0;
    for i in 1..w.len() {
        let (p, c) = (w[i - 1], w[i]);
        let digit_change = p.is_numeric() != c.is_numeric();
        let hump = lower_start && p.is_lowercase() && c.is_uppercase();
        let acronym = p.is_uppercase()
            && c.is_uppercase()
            && w.get(i + 1).is_some_and(|n| n.is_lowercase())
            // A plural acronym (`URLs`) is one word.
            && !(i + 2 == w.len() && w[i + 1] == 's');
        if digit_change || hump || acronym {
            emit(&w[start..i]);
            start = i;
        }
    }
    emit(&w[start..]);
}

/// The distinct normalized query tokens, connectors removed.
fn query_tokens(query: &str) -> Vec<String> {
    let mut tokens = tokenize(query);
    tokens.retain(|t| !CONNECTORS.contains(&t.as_str()));
    let mut seen = Vec::with_capacity(tokens.len());
    for t in tokens {
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    seen
}

const NAME: u8 = 1;
const TERMS: u8 = 2;
const SUMMARY: u8 = 4;
const DESCRIPTION: u8 = 8;

/// Field weights, strongest first (name > search terms > summary >
/// description).
const WEIGHTS: [(u8, f32); 4] = [
    (NAME, 3.0),
    (TERMS, 2.4),
    (SUMMARY, 1.8),
    (DESCRIPTION, 0.8),
];
/// A prefix match counts this much of an exact one in the same field.
const PREFIX_FACTOR: f32 = 0.85;

/// The strongest field weight of each field mask, for exact and prefix
/// matches.
const EXACT_WEIGHTS: [f32; 16] = mask_weights(1.0);
const PREFIX_WEIGHTS: [f32; 16] = mask_weights(PREFIX_FACTOR);

const fn mask_weights(factor: f32) -> [f32; 16] {
    let mut out = [0f32; 16];
    let mut mask = 1;
    while mask < 16 {
        let mut i = 0;
        while i < WEIGHTS.len() {
            if mask & WEIGHTS[i].0 as usize != 0 {
                out[mask] = WEIGHTS[i].1 * factor;
                break;
            }
            i += 1;
        }
        mask += 1;
    }
    out
}

/// A capability's running score during one query.
#[derive(Clone, Copy, Default)]
struct Acc {
    score: f32,
    /// The strongest contribution of the current query token.
    best: f32,
    /// Query tokens matched.
    matched: u8,
    /// Fields the current query token matched.
    fields: u8,
    /// Query tokens matched per coverage field.
    hits: [u8; 3],
}

/// Bonus weights for the share of the name, search-term and summary tokens
/// that the query covers: among capabilities matching the same words, the
/// one the query describes most fully ranks first.
const COVERAGE: [(u8, f32); 3] = [(NAME, 2.0), (TERMS, 1.5), (SUMMARY, 2.0)];

/// A capability's precomputed search data.
struct Doc {
    /// `{"name":…,"signature":…,"summary":…}` compact JSON length.
    result_bytes: usize,
    result: SearchResult,
    /// Distinct tokens of the name (without catalog-wide ones such as a
    /// common root), the search terms and the summary, for coverage.
    lens: [u16; 3],
}

/// The inverted index of a catalog.
pub(crate) struct SearchIndex {
    docs: Vec<Doc>,
    vocab: Vec<String>,
    /// Per vocabulary token: (capability, field mask), by capability.
    postings: Vec<Vec<(u32, u8)>>,
    /// Lower-cased dotted names, for the exact-name rule.
    by_lower_name: HashMap<String, Vec<usize>>,
}

impl SearchIndex {
    pub(crate) fn build(entries: &[Entry]) -> SearchIndex {
        let mut map: HashMap<String, Vec<(u32, u8)>> = HashMap::new();
        let mut docs = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let i = i as u32;
            let mut add = |bit: u8, t: &str| {
                if CONNECTORS.contains(&t) {
                    return;
                }
                match map.get_mut(t) {
                    Some(list) => match list.last_mut() {
                        Some((doc, mask)) if *doc == i => *mask |= bit,
                        _ => list.push((i, bit)),
                    },
                    None => {
                        map.insert(t.to_string(), vec![(i, bit)]);
                    }
                }
            };
            each_token(e.name.as_str(), |t| add(NAME, t));
            for term in &e.search_terms {
                each_token(term, |t| add(TERMS, t));
            }
            each_token(&e.summary, |t| add(SUMMARY, t));
            each_token(&e.description, |t| add(DESCRIPTION, t));
            let result = SearchResult {
                name: e.name.to_string(),
                signature: e.signature.clone(),
                summary: e.summary.clone(),
            };
            docs.push(Doc {
                result_bytes: serde_json::to_string(&result).map_or(usize::MAX, |s| s.len()),
                result,
                lens: [0; 3],
            });
        }
        let mut pairs: Vec<(String, Vec<(u32, u8)>)> = map.into_iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let (vocab, postings): (Vec<String>, Vec<Vec<(u32, u8)>>) = pairs.into_iter().unzip();
        for list in &postings {
            let in_names = list.iter().filter(|(_, m)| m & NAME != 0).count();
            let common = in_names * 2 > docs.len();
            for &(doc, mask) in list {
                for (k, (bit, _)) in COVERAGE.iter().enumerate() {
                    if mask & bit != 0 && !(common && *bit == NAME) {
                        let len = &mut docs[doc as usize].lens[k];
                        *len = len.saturating_add(1);
                    }
                }
            }
        }
        let mut by_lower_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, d) in docs.iter().enumerate() {
            by_lower_name
                .entry(d.result.name.to_lowercase())
                .or_default()
                .push(i);
        }
        SearchIndex {
            by_lower_name,
            docs,
            vocab,
            postings,
        }
    }

    pub(crate) fn search(
        &self,
        query: &str,
        limits: &SearchLimits,
    ) -> Result<SearchResponse, SearchError> {
        if query.len() > limits.max_query_bytes {
            return Err(SearchError::QueryTooLong);
        }
        let trimmed = query.trim();
        let tokens = query_tokens(trimmed);
        if tokens.len() > limits.max_query_tokens {
            return Err(SearchError::TooManyTokens);
        }
        let exact: &[usize] = if trimmed.contains('.') {
            self.by_lower_name
                .get(&trimmed.to_lowercase())
                .map_or(&[], Vec::as_slice)
        } else {
            &[]
        };
        if tokens.is_empty() && exact.is_empty() {
            return Ok(SearchResponse::empty());
        }
        let ranked = self.rank(&tokens, exact, limits.max_results.saturating_add(1));
        Ok(self.pack(&ranked, limits))
    }

    /// Eligible capabilities in result order (exact names first, then
    /// score descending, then name ascending), at most `keep` of the
    /// scored ones: enough to pack the bounded prefix and see truncation.
    fn rank(&self, tokens: &[String], exact: &[usize], keep: usize) -> Vec<usize> {
        let n = self.docs.len();
        let q = tokens.len();
        let needed = match q {
            0 => usize::MAX,
            1 | 2 => q,
            _ => (2 * q).div_ceil(3),
        };
        let mut acc = vec![Acc::default(); n];
        let mut touched: Vec<u32> = Vec::new();
        let mut idf_sum = 0f32;
        for t in tokens {
            let exact_at = self.vocab.binary_search(t);
            let start = match exact_at {
                Ok(i) => i,
                Err(i) => i,
            };
            // The exact match (if any) and, for three or more characters,
            // every longer token with this prefix.
            let mut end = start + usize::from(exact_at.is_ok());
            if t.chars().count() >= 3 {
                end += self.vocab[end..]
                    .iter()
                    .take_while(|v| v.starts_with(t.as_str()))
                    .count();
            }
            touched.clear();
            for i in start..end {
                let weights = if exact_at == Ok(i) {
                    &EXACT_WEIGHTS
                } else {
                    &PREFIX_WEIGHTS
                };
                for &(doc, mask) in &self.postings[i] {
                    let a = &mut acc[doc as usize];
                    if a.fields == 0 {
                        touched.push(doc);
                    }
                    a.fields |= mask;
                    a.best = a.best.max(weights[usize::from(mask)]);
                }
            }
            if touched.is_empty() {
                continue;
            }
            let idf = 1.0 + (n as f32 / touched.len() as f32).ln();
            idf_sum += idf;
            for &doc in &touched {
                let a = &mut acc[doc as usize];
                a.score += a.best * idf;
                a.matched += 1;
                for (k, (bit, _)) in COVERAGE.iter().enumerate() {
                    if a.fields & bit != 0 {
                        a.hits[k] += 1;
                    }
                }
                a.best = 0.0;
                a.fields = 0;
            }
        }
        let mean_idf = if q > 0 { idf_sum / q as f32 } else { 0.0 };
        // The best `keep` in result order, kept sorted: most candidates are
        // rejected by one comparison with the current worst.
        let order = |x: &(f32, usize), y: &(f32, usize)| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1));
        let mut top: Vec<(f32, usize)> = Vec::with_capacity(keep.saturating_add(1).min(n));
        for (d, a) in acc.iter().enumerate() {
            if usize::from(a.matched) < needed || exact.contains(&d) {
                continue;
            }
            let doc = &self.docs[d];
            let mut coverage = 0.0;
            for (k, (_, w)) in COVERAGE.iter().enumerate() {
                if doc.lens[k] > 0 {
                    let share = f32::from(a.hits[k]) / f32::from(doc.lens[k]);
                    coverage += w * share.min(1.0);
                }
            }
            let candidate = (a.score + mean_idf * coverage, d);
            if top.len() == keep {
                match top.last() {
                    Some(worst) if order(&candidate, worst).is_lt() => {
                        top.pop();
                    }
                    _ => continue,
                }
            }
            // Documents are in name order, so the index breaks ties by name.
            let at = top.partition_point(|x| order(x, &candidate).is_lt());
            top.insert(at, candidate);
        }
        let eligible = top;
        let mut ranked: Vec<usize> = exact.to_vec();
        ranked.extend(eligible.into_iter().map(|(_, d)| d));
        ranked
    }

    /// The highest-ranked prefix under the count and byte bounds.
    fn pack(&self, ranked: &[usize], limits: &SearchLimits) -> SearchResponse {
        // `{"results":[],"truncated":false}`
        let mut bytes = 32usize;
        let mut results = Vec::new();
        for (i, &d) in ranked.iter().enumerate() {
            let doc = &self.docs[d];
            let add = doc.result_bytes.saturating_add(usize::from(i > 0));
            if results.len() >= limits.max_results
                || bytes.saturating_add(add) > limits.max_response_bytes
            {
                return SearchResponse {
                    results,
                    truncated: true,
                };
            }
            bytes += add;
            results.push(doc.result.clone());
        }
        SearchResponse {
            results,
            truncated: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        tokenize(s)
    }

    #[test]
    fn the_reference_examples_tokenize_as_documented() {
        assert_eq!(
            toks("GitHub.Pulls.createReview"),
            ["github", "pulls", "create", "review"]
        );
        assert_eq!(toks("pull_request"), ["pull", "request"]);
        assert_eq!(toks("sql mysql"), ["sql", "mysql"]);
        assert_eq!(toks("HTTPServer"), ["http", "server"]);
        assert_eq!(toks("getHTTPServer"), ["get", "http", "server"]);
        assert_eq!(toks("v2"), ["v", "2"]);
        assert_eq!(toks("oauth2Token"), ["oauth", "2", "token"]);
        assert_eq!(toks("listURLs"), ["list", "urls"]);
        assert_eq!(
            toks("  self-hosted   runner. "),
            ["self", "hosted", "runner"]
        );
        assert_eq!(toks("Élan vital"), ["élan", "vital"]);
        assert!(toks(" ._- ").is_empty());
    }

    #[test]
    fn query_tokens_drop_connectors_and_duplicates() {
        assert_eq!(
            query_tokens("the list of issues and the Issues for a repo"),
            ["list", "issues", "repo"]
        );
        assert!(query_tokens("a an and by for from in of on or the to with").is_empty());
    }
}
