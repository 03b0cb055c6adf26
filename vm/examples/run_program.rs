//! Runs a program file under the default limits (steps and time raised out
//! of the way) and prints its result, how long it took and the process's
//! peak resident memory: for looking at what the collector does with one
//! program without building the server.
//!
//! `cargo run --release -p codemode-vm --example run_program -- FILE.star`

use codemode_vm::{execute, Data, Host, HostCall, Limits};
use std::time::{Duration, Instant};

struct NoHost;

impl Host for NoHost {
    type Error = String;

    fn call(&self, call: HostCall<'_>) -> Result<Data, String> {
        Err(format!("no capability {}", call.name))
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run_program FILE.star");
        std::process::exit(2);
    };
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let limits = Limits {
        max_steps: u64::MAX / 2,
        max_time: Duration::from_secs(600),
        max_heap_bytes: std::env::var("HEAP")
            .ok()
            .and_then(|h| h.parse().ok())
            .unwrap_or(64 << 20),
        ..Limits::default()
    };
    let start = Instant::now();
    let result = execute(&source, &[], &NoHost, &limits, None);
    let took = start.elapsed();
    match result {
        Ok(d) => println!("{}", d.to_json_string()),
        Err(e) => println!("error: {e} ({e:?})"),
    }
    eprintln!("time {took:?}, peak RSS {} KiB", peak_rss_kib());
}
