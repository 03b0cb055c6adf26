//! Fuzzes search queries against a catalog with every shape the repository
//! knows (`demo`, `conformance` and the 1,000-entry GitHub manifest when
//! present): any query must give a bounded, well-formed response or
//! `resource limit exceeded`, and every result must be describable.
#![no_main]

use codemode_catalog::SearchLimits;
use codemode_fuzz::rich_catalog;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Queries arrive as JSON strings: always UTF-8.
    let Ok(query) = std::str::from_utf8(data) else {
        return;
    };
    let catalog = rich_catalog();
    let limits = SearchLimits::default();
    let tokens = codemode_catalog::tokenize(query);
    match catalog.search_with(query, &limits) {
        Ok(response) => {
            assert!(response.results.len() <= limits.max_results);
            let json = serde_json::to_string(&response).expect("a response serializes");
            assert!(
                json.len() <= limits.max_response_bytes,
                "{} bytes",
                json.len()
            );
            for result in &response.results {
                let described = catalog.describe(&result.name).expect("a result describes");
                assert_eq!(described.signature, result.signature);
            }
        }
        Err(_) => assert!(
            query.len() > limits.max_query_bytes || tokens.len() > limits.max_query_tokens,
            "a query within the bounds was refused"
        ),
    }
});
