//! The memory of paused executions: starts N executions of a small
//! program that stops at its first capability call, holds them all
//! paused, and prints the process's resident memory per execution (its
//! arena, its stack's touched pages and the rest of its state), then
//! answers every call and checks every result.
//!
//! With `release`, each execution's stack is given back below its pause
//! ([`Execution::release_stack`], as the service does when a call waits),
//! and the stack's resident bytes are printed too.
//!
//! Usage: `cargo run --release -p codemode-vm --example paused_memory [N]
//! [release]`

use codemode_vm::{Capabilities, Data, Execution, Limits, Step};
use std::time::Duration;

const PROGRAM: &str = r#"
def main():
    total = 0
    for i in range(4):
        item = api.get_item(id=i)
        total += item["value"]
    return {"total": total}
"#;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let release = std::env::args().nth(2).as_deref() == Some("release");
    let caps = Capabilities::new(["api.get_item"]);
    let item = |id: &Data| Data::Map(vec![("value".into(), id.clone())]);
    // Warm up: the stack pool and allocator as a server has them.
    for _ in 0..64 {
        let mut e: Execution<'_, String> = Execution::new(PROGRAM, &caps, Limits::default(), None);
        let mut step = e.resume(None);
        while let Step::Call(call) = step {
            step = e.resume(Some((Ok(item(&call.args[0].1)), Duration::ZERO)));
        }
    }
    let before = rss_kib();
    let mut open: Vec<Execution<'_, String>> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut e = Execution::new(PROGRAM, &caps, Limits::default(), None);
        match e.resume(None) {
            Step::Call(_) => {
                if release {
                    e.release_stack();
                }
                open.push(e)
            }
            Step::Done(r) => panic!("ended without a call: {r:?}"),
        }
    }
    let after = rss_kib();
    let stack = open
        .first()
        .and_then(|e| e.resident_stack_bytes())
        .unwrap_or(0);
    println!(
        "{n} paused executions: {} KiB resident, {:.1} KiB each (the first one's stack: {} KiB)",
        after - before,
        (after - before) as f64 / n as f64,
        stack / 1024
    );
    for mut e in open {
        let mut step = e.resume(Some((Ok(item(&Data::Int(0))), Duration::ZERO)));
        while let Step::Call(call) = step {
            step = e.resume(Some((Ok(item(&call.args[0].1)), Duration::ZERO)));
        }
        match step {
            Step::Done(Ok(Data::Map(m))) => assert_eq!(m[0].1, Data::Int(6)),
            other => panic!("unexpected {other:?}"),
        }
    }
}
