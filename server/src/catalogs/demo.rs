//! The built-in `demo` catalog: the specification's sample capabilities
//! (`records.lookup`, `records.search`, `records.status`, `shipping.quote`)
//! over a small fixed data set, so a new user can try the server at once.
//! It is defined through the same public API a host uses, and doubles as an
//! example of typed capabilities with input rules.

use codemode_catalog::{Annotations, Capability, HandlerError, NoInput, Rule};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of the built-in data set.
pub const DATA_VERSION: &str = "2026-11-01";

/// One record of the data set: key, id, label, active flag, score.
const RECORDS: &[(&str, &str, &str, bool, f64)] = &[
    ("alpha", "rec-001", "red", true, 2.5),
    ("alpha-beta", "rec-002", "blue", false, 1.0),
    ("alpha-gamma", "rec-003", "red", true, 1.5),
    ("beta", "rec-004", "green", true, 3.0),
    ("delta", "rec-005", "blue", true, 0.5),
    ("epsilon", "rec-006", "green", false, 4.0),
    ("gamma", "rec-007", "red", true, 2.0),
    ("omega", "rec-008", "blue", true, 1.75),
];

#[derive(Deserialize, JsonSchema)]
struct LookupInput {
    key: String,
    limit: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
struct Record {
    key: String,
    id: String,
    label: String,
    active: bool,
    score: f64,
}

#[derive(Serialize, JsonSchema)]
struct LookupOutput {
    records: Vec<Record>,
}

async fn lookup(input: LookupInput) -> Result<LookupOutput, HandlerError> {
    let limit = usize::try_from(input.limit.unwrap_or(10)).unwrap_or(0);
    let records = RECORDS
        .iter()
        .filter(|r| r.0.starts_with(&input.key))
        .take(limit)
        .map(|&(key, id, label, active, score)| Record {
            key: key.into(),
            id: id.into(),
            label: label.into(),
            active,
            score,
        })
        .collect();
    Ok(LookupOutput { records })
}

#[derive(Deserialize, JsonSchema)]
struct SearchInput {
    count: i64,
    active: bool,
    score: f64,
    label: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Item {
    id: String,
    active: bool,
    score: f64,
}

#[derive(Serialize, JsonSchema)]
struct SearchOutput {
    items: Vec<Item>,
}

async fn search(input: SearchInput) -> Result<SearchOutput, HandlerError> {
    let count = usize::try_from(input.count).unwrap_or(0);
    let items = RECORDS
        .iter()
        .filter(|r| r.3 == input.active && r.4 >= input.score)
        .filter(|r| input.label.as_deref().is_none_or(|l| r.2 == l))
        .take(count)
        .map(|&(_, id, _, active, score)| Item {
            id: id.into(),
            active,
            score,
        })
        .collect();
    Ok(SearchOutput { items })
}

#[derive(Serialize, JsonSchema)]
struct StatusOutput {
    count: i64,
    version: String,
}

async fn status(_: NoInput) -> Result<StatusOutput, HandlerError> {
    Ok(StatusOutput {
        count: RECORDS.len() as i64,
        version: DATA_VERSION.into(),
    })
}

#[derive(Deserialize, JsonSchema)]
struct QuoteInput {
    weight_grams: i64,
}

#[derive(Serialize, JsonSchema)]
struct QuoteOutput {
    price_cents: i64,
}

async fn quote(input: QuoteInput) -> Result<QuoteOutput, HandlerError> {
    let price_cents = if input.weight_grams > 1000 { 900 } else { 500 };
    Ok(QuoteOutput { price_cents })
}

/// The capabilities of the `demo` catalog: every one reads the built-in
/// data only (read-only, not destructive, idempotent, closed-world).
pub fn capabilities() -> Vec<Capability> {
    let all = vec![
        Capability::new("records.lookup", lookup)
            .id("records.entry.lookup")
            .summary("Look up one record by key.")
            .description(
                "Returns the records of the built-in data set whose key starts with `key`, \
                 in key order, at most `limit` of them (default 10, 1 to 100).",
            )
            .search_terms(["find record", "get entry", "fetch record by key"])
            .rule("limit", Rule::range(1, 100)),
        Capability::new("records.search", search)
            .id("records.entry.search")
            .summary("Search records by active flag, minimum score and label.")
            .description(
                "Returns up to `count` records (0 to 100) whose active flag equals `active` \
                 and whose score is at least `score`, optionally only those with `label`.",
            )
            .search_terms(["filter records", "query records", "list records"])
            .rule("count", Rule::range(0, 100)),
        Capability::new("records.status", status)
            .id("records.status")
            .summary("Report the number of records and the data set version.")
            .description("Returns how many records the built-in data set holds and its version.")
            .search_terms(["record count", "dataset version", "health"]),
        Capability::new("shipping.quote", quote)
            .id("shipping.quote")
            .summary("Quote domestic shipping in cents.")
            .description(
                "Prices a parcel of 1 to 5000 grams: 500 cents up to 1000 grams, else 900 cents.",
            )
            .search_terms(["shipping price", "parcel cost", "postage"])
            .rule("weight_grams", Rule::range(1, 5000))
            .output_rule("price_cents", [Rule::Minimum(1.into())]),
    ];
    all.into_iter()
        .map(|c| c.annotations(Annotations::read_only_closed()))
        .collect()
}
