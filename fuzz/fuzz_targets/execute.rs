//! Fuzzes the whole pipeline behind the service: any program, compiled and
//! run with small budgets against the built-in `conformance` catalog
//! (binding, authorization, handlers, output checks, the deadline), must
//! finish with a value or one of the contract's error texts — never a
//! panic, a hang, an abort or `internal failure`.
#![no_main]

use codemode_catalog::{Error, ExecuteOptions, Subject};
use codemode_fuzz::{conformance_service, runtime};
use codemode_server::SECRET_DETAIL;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let service = conformance_service();
    let subject = Subject::new("fuzz");
    let outcome = runtime().block_on(service.execute(&subject, source, ExecuteOptions::default()));
    match outcome {
        Ok(data) => {
            let limit = service.config().limits.max_value_bytes;
            assert!(
                data.to_json_string().len() <= limit,
                "result over the value limit"
            );
        }
        Err(Error::Internal) => panic!("internal failure for a program"),
        Err(Error::CapabilityFailed(Some(message))) => {
            assert_eq!(message, "conformance failure", "a private message leaked");
        }
        Err(e) => {
            // The handler's private detail must never show; an error may
            // quote the program's own text, so a program that spells the
            // detail out itself proves nothing.
            let text = e.to_string();
            assert!(
                !text.contains(SECRET_DETAIL) || source.contains(SECRET_DETAIL),
                "{text}"
            );
        }
    }
});
