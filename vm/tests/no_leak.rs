//! The arena never runs destructors, so any std container stored in an
//! arena object would leak on every execution (the fuzzer found one in the
//! capability namespaces). This test counts live heap bytes with a
//! counting global allocator and requires that repeated executions, which
//! touch every kind of value, leave nothing behind. Only the test's own
//! thread is counted: the test harness's thread allocates while the test
//! runs (a CI run once saw 900 bytes of its bookkeeping as a leak).

use codemode_vm::{execute, Data, Host, HostCall, Limits};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Whether this thread's allocations are counted (no destructor, so
    /// it is readable from the allocator at any time).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count(delta: isize) {
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        LIVE.fetch_add(delta, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to the system allocator unchanged; the
// counting beside it allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

struct EchoHost;

impl Host for EchoHost {
    type Error = ();
    fn call(&self, call: HostCall<'_>) -> Result<Data, ()> {
        Ok(Data::Map(call.args))
    }
}

const PROGRAM: &str = r#"
def main():
    r = records.lookup(key="a", opts={"x": [1, 2.5, None]})
    xs = [i * i for i in range(100)]
    d = {str(i): i for i in range(50)}
    f = lambda y: y + len(xs)
    big = 1 << 200
    s = "%s-%d" % ("k", f(1)) + json.encode(d)
    return [r["key"], sorted(xs, reverse=True)[0], len(s), str(big)[:5], github.pulls.get(n=1)["n"]]
"#;

#[test]
fn executions_leave_no_heap_memory_behind() {
    COUNTED.with(|c| c.set(true));
    let caps = ["records.lookup", "records.status", "github.pulls.get"];
    let run = || {
        let r = execute(PROGRAM, &caps, &EchoHost, &Limits::default(), None);
        assert!(r.is_ok(), "{r:?}");
    };
    // Warm up once-initialised state (hash seed, lazily built tables).
    run();
    run();
    let before = LIVE.load(Ordering::Relaxed);
    for _ in 0..50 {
        run();
    }
    let after = LIVE.load(Ordering::Relaxed);
    // Never more; under `gc-stress` the kept arenas may end smaller (a
    // collection sizes the arena it copies into by what it copies).
    assert!(
        after - before <= 0,
        "{} bytes leaked over 50 executions",
        after - before
    );
    // Failing executions must not leak either.
    let before = LIVE.load(Ordering::Relaxed);
    for _ in 0..20 {
        let r = execute(
            "def main():\n    fail(records.status())\n",
            &caps,
            &EchoHost,
            &Limits::default(),
            None,
        );
        assert!(r.is_err());
    }
    assert!(LIVE.load(Ordering::Relaxed) - before <= 0);
}
