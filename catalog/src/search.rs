//! Search over the enabled capabilities, by the rules of the MCP tool
//! reference as `docs/architecture.md` (section 7) states them.
//!
//! [`tokenize`] splits text at every rune that is not a Unicode letter
//! (L*) or decimal digit (Nd), then inside a word at camel-case humps
//! (only when the word starts with a lower-case letter: `createReview` →
//! create, review, but `GitHub` → github), before the last capital of an
//! acronym followed by a word (`HTTPServer` → http, server; a plural `URLs`
//! stays whole) and at letter/digit transitions, and lower-cases with the
//! simple (one character) mapping. The [`SearchIndex`] is built once per
//! catalog: a sorted vocabulary whose postings say in which fields (name,
//! search terms, summary, description) each capability has the token, so
//! exact lookups are a binary search and prefix lookups a range.
//!
//! A query token contributes once to a capability: its strongest match
//! times its rarity (idf). A prefix match weighs its field's weight times
//! `PREFIX_FACTOR`; an exact match its field's weight plus a coverage
//! share (a fixed weight divided by the field's distinct tokens), so that
//! within one field an exact match always ranks above a prefix match, and
//! of two capabilities matching the same words the one the query describes
//! most fully ranks first. Eligibility, ordering, count and byte bounds
//! follow the reference.

use crate::catalog::Entry;
use serde::Serialize;
use std::collections::HashMap;
use unicode_general_category::{get_general_category, GeneralCategory};

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

/// What a character is to the tokenizer: the reference's rule is that
/// every rune that is not a Unicode letter (categories L*) or digit (Nd)
/// separates tokens, so `²` (No), `½` (No) and `Ⅻ` (Nl) are separators,
/// unlike for Rust's `char::is_alphanumeric`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Lu.
    Upper,
    /// Ll.
    Lower,
    /// Lt, Lm, Lo.
    OtherLetter,
    /// Nd.
    Digit,
    Separator,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return match c {
            'a'..='z' => Class::Lower,
            'A'..='Z' => Class::Upper,
            '0'..='9' => Class::Digit,
            _ => Class::Separator,
        };
    }
    match get_general_category(c) {
        GeneralCategory::UppercaseLetter => Class::Upper,
        GeneralCategory::LowercaseLetter => Class::Lower,
        GeneralCategory::TitlecaseLetter
        | GeneralCategory::ModifierLetter
        | GeneralCategory::OtherLetter => Class::OtherLetter,
        GeneralCategory::DecimalNumber => Class::Digit,
        _ => Class::Separator,
    }
}

/// The simple lower-case mapping of `c` (one character, as Go's
/// `unicode.ToLower`): Rust's full mapping differs from it only for `İ`,
/// whose full lower case is two characters.
fn simple_lower(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    if c == '\u{130}' {
        return 'i';
    }
    c.to_lowercase().next().unwrap_or(c)
}

/// Calls `f` with each normalized token of `text`, without allocating per
/// token.
fn each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut word: Vec<(char, Class)> = Vec::new();
    let mut buf = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        let k = class(c);
        if k != Class::Separator {
            word.push((c, k));
        } else if !word.is_empty() {
            split_word(&word, &mut buf, &mut f);
            word.clear();
        }
    }
}

fn split_word(w: &[(char, Class)], buf: &mut String, f: &mut impl FnMut(&str)) {
    let lower_start = w[0].1 == Class::Lower;
    let mut emit = |part: &[(char, Class)]| {
        buf.clear();
        buf.extend(part.iter().map(|&(c, _)| simple_lower(c)));
        f(buf);
    };
    let mut start = 0;
    for i in 1..w.len() {
        let (p, c) = (w[i - 1].1, w[i].1);
        let digit_change = (p == Class::Digit) != (c == Class::Digit);
        let hump = lower_start && p == Class::Lower && c == Class::Upper;
        let acronym = p == Class::Upper
            && c == Class::Upper
            && w.get(i + 1).is_some_and(|n| n.1 == Class::Lower)
            // A plural acronym (`URLs`) is one word.
            && !(i + 2 == w.len() && w[i + 1].0 == 's');
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
/// description), indexed by the field's bit position.
const WEIGHTS: [f32; 4] = [3.0, 2.4, 1.8, 0.8];
/// A prefix match counts this much of an exact one in the same field.
const PREFIX_FACTOR: f32 = 0.85;
/// Coverage: an exact match in the name (without its root segment), the
/// search terms or the summary also weighs this much divided by the number
/// of distinct tokens of that field, so that of two capabilities matching
/// the same words the one the query describes most fully ranks first
/// (`issues.create` before `reactions.createForIssue` for "create an
/// issue"). A prefix match gets no coverage: within one field an exact
/// match always ranks above a prefix match.
const COVERAGE: [f32; 3] = [7.0, 7.0, 7.0];

const _: () = assert!(PREFIX_FACTOR < 1.0);

/// The weight of a prefix match for each field mask: its strongest field's
/// weight times [`PREFIX_FACTOR`].
const PREFIX_WEIGHTS: [f32; 16] = {
    let mut out = [0f32; 16];
    let mut mask = 1;
    while mask < 16 {
        out[mask] = WEIGHTS[(mask as u8).trailing_zeros() as usize] * PREFIX_FACTOR;
        mask += 1;
    }
    out
};

/// A capability's precomputed search result.
struct Doc {
    /// `{"name":…,"signature":…,"summary":…}` compact JSON length.
    result_bytes: usize,
    result: SearchResult,
}

/// The weight of an exact match in the fields of `mask` for a capability
/// whose per-field exact weights (the field's weight plus its coverage
/// share) are `exact`: the strongest of them. (A query token's
/// contribution is its strongest match only.)
fn exact_weight(exact: &[f32; 4], mask: u8) -> f32 {
    let mut best = 0f32;
    let mut bits = mask;
    while bits != 0 {
        best = best.max(exact[bits.trailing_zeros() as usize]);
        bits &= bits - 1;
    }
    best
}

/// One capability that has a vocabulary token, with the weights of an
/// exact and of a prefix match of it (computed when the index is built).
#[derive(Clone, Copy)]
struct Posting {
    doc: u32,
    exact: f32,
    prefix: f32,
}

/// The inverted index of a catalog.
pub(crate) struct SearchIndex {
    docs: Vec<Doc>,
    vocab: Vec<String>,
    /// Per vocabulary token: the capabilities that have it, in order.
    postings: Vec<Vec<Posting>>,
    /// Lower-cased dotted names, for the exact-name rule.
    by_lower_name: HashMap<String, Vec<usize>>,
}

impl SearchIndex {
    pub(crate) fn build(entries: &[Entry]) -> SearchIndex {
        let mut map: HashMap<String, Vec<(u32, u8)>> = HashMap::new();
        let mut docs = Vec::with_capacity(entries.len());
        let mut exact_weights = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let i = i as u32;
            // Distinct tokens per coverage field (name, terms, summary).
            let mut lens = [0u16; 3];
            // Adds `t` to field `bit`; whether it is new there.
            let mut add = |bit: u8, t: &str| -> bool {
                if CONNECTORS.contains(&t) {
                    return false;
                }
                match map.get_mut(t) {
                    Some(list) => match list.last_mut() {
                        Some((doc, mask)) if *doc == i => {
                            let new = *mask & bit == 0;
                            *mask |= bit;
                            new
                        }
                        _ => {
                            list.push((i, bit));
                            true
                        }
                    },
                    None => {
                        map.insert(t.to_string(), vec![(i, bit)]);
                        true
                    }
                }
            };
            let mut count = |k: usize, new: bool| lens[k] = lens[k].saturating_add(u16::from(new));
            // The root segment is shared by a whole service (`github.`): it
            // matches, but the coverage of a name counts the rest of it.
            let name = e.name.as_str();
            let (root, rest) = name.split_once('.').unwrap_or(("", name));
            each_token(rest, |t| count(0, add(NAME, t)));
            each_token(root, |t| {
                add(NAME, t);
            });
            for term in &e.search_terms {
                each_token(term, |t| count(1, add(TERMS, t)));
            }
            each_token(&e.summary, |t| count(2, add(SUMMARY, t)));
            each_token(&e.description, |t| {
                add(DESCRIPTION, t);
            });
            let result = SearchResult {
                name: e.name.to_string(),
                signature: e.signature.clone(),
                summary: e.summary.clone(),
            };
            let mut exact = WEIGHTS;
            for (k, len) in lens.iter().enumerate() {
                if *len > 0 {
                    exact[k] += COVERAGE[k] / f32::from(*len);
                }
            }
            docs.push(Doc {
                result_bytes: serde_json::to_string(&result).map_or(usize::MAX, |s| s.len()),
                result,
            });
            exact_weights.push(exact);
        }
        let mut pairs: Vec<(String, Vec<(u32, u8)>)> = map.into_iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let (vocab, postings): (Vec<String>, Vec<Vec<(u32, u8)>>) = pairs.into_iter().unzip();
        let postings = postings
            .into_iter()
            .map(|list| {
                list.into_iter()
                    .map(|(doc, mask)| Posting {
                        doc,
                        exact: exact_weight(&exact_weights[doc as usize], mask),
                        prefix: PREFIX_WEIGHTS[usize::from(mask)],
                    })
                    .collect()
            })
            .collect();
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
        // Per capability: the score so far, the strongest match of the
        // current token, and the query tokens matched.
        let mut acc = vec![(0f32, 0f32, 0u8); n];
        // The capabilities the current token matched.
        let mut touched: Vec<u32> = Vec::new();
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
            if end == start + 1 && exact_at.is_ok() {
                // Exact only: every capability appears once, so its one
                // match is its strongest.
                let list = &self.postings[start];
                let idf = 1.0 + (n as f32 / list.len() as f32).ln();
                for p in list {
                    let a = &mut acc[p.doc as usize];
                    a.0 += p.exact * idf;
                    a.2 += 1;
                }
                continue;
            }
            touched.clear();
            for i in start..end {
                let is_exact = exact_at == Ok(i);
                for p in &self.postings[i] {
                    let d = p.doc as usize;
                    let weight = if is_exact { p.exact } else { p.prefix };
                    let a = &mut acc[d];
                    if a.1 == 0.0 {
                        touched.push(p.doc);
                    }
                    a.1 = a.1.max(weight);
                }
            }
            if touched.is_empty() {
                continue;
            }
            let idf = 1.0 + (n as f32 / touched.len() as f32).ln();
            for &doc in &touched {
                let d = doc as usize;
                let a = &mut acc[d];
                a.0 += a.1 * idf;
                a.1 = 0.0;
                a.2 += 1;
            }
        }
        // The best `keep` in result order, kept sorted: most candidates are
        // rejected by one comparison with the current worst.
        let order = |x: &(f32, usize), y: &(f32, usize)| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1));
        let mut top: Vec<(f32, usize)> = Vec::with_capacity(keep.saturating_add(1).min(n));
        for (d, &(score, _, matched)) in acc.iter().enumerate() {
            if usize::from(matched) < needed || exact.contains(&d) {
                continue;
            }
            let candidate = (score, d);
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
        let mut ranked: Vec<usize> = exact.to_vec();
        ranked.extend(top.into_iter().map(|(_, d)| d));
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
    fn lower_casing_is_simple() {
        // Every character but `İ` has a one-character full lower case, the
        // same as its simple one.
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let mut lower = c.to_lowercase();
            if c != '\u{130}' {
                assert_eq!(lower.next(), Some(simple_lower(c)), "{c:?}");
                assert_eq!(lower.next(), None, "{c:?}");
            }
        }
        assert_eq!(simple_lower('\u{130}'), 'i');
        assert_eq!(toks("İSTANBUL Σίσυφος"), ["istanbul", "σίσυφος"]);
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
