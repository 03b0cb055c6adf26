//! Fuzzes the whole pipeline with small budgets: any program must finish
//! with a value or a classified error, never a panic, a hang or an abort.
#![no_main]

use codemode_vm::{execute, Data, Host, HostCall, Limits};
use libfuzzer_sys::fuzz_target;
use std::time::Duration;

struct EchoHost;

impl Host for EchoHost {
    type Error = ();
    fn call(&self, call: HostCall<'_>) -> Result<Data, ()> {
        Ok(Data::Map(call.args))
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits {
        max_steps: 10_000,
        max_time: Duration::from_millis(200),
        max_heap_bytes: 4 << 20,
        ..Limits::default()
    };
    let _ = execute(src, &["records.lookup", "records.status"], &EchoHost, &limits, None);
});
