//! A program in progress that stops at each capability call.
//!
//! [`Execution`] runs one program as [`crate::execute`] does, but instead
//! of calling a host it stops at every capability call and hands the call
//! ([`Step::Call`]: the dotted name and the keyword arguments as [`Data`])
//! to whoever drives it, who resumes it later with the call's result
//! ([`Execution::resume`]). Between the two nothing runs and no thread is
//! held: the execution's whole state — the interpreter's frames,
//! registers and loop iterators, its arena heap, its budgets, and the
//! Rust frames of a builtin that called back into Starlark
//! (`sorted(key=...)`) — lives in the [`Execution`] value, which the host
//! owns and may move to another thread between two steps.
//!
//! The program runs on a stack of its own (a stackful coroutine,
//! `corosensei`), so the interpreter, the compiler and every builtin are
//! the same code whether a host drives the program step by step or
//! [`crate::execute`] calls the host in a loop: results, errors and step
//! counts are the same, and a capability call made anywhere — in `main`,
//! in a function it calls, inside a sort key — pauses the same way.
//! Dropping a paused execution unwinds its stack, which gives its arena
//! and everything else it holds back at once. Stacks are reused
//! ([`STACK_BYTES`] of address space each; only the pages a program
//! touched take memory).

use crate::arena_pool::POOL;
use crate::budget::{Budget, HeapTotal, Limits};
use crate::capabilities::Capabilities;
use crate::data::Data;
use crate::error::LimitKind;
use crate::exec::{arena_capacity, classify, run, ExecError, SPACE_CAPACITY};
use crate::gc::Space;
use crate::interp::DynHost;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::any::Any;
use std::borrow::Borrow;
use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The address space of one execution's stack: more than the deepest run
/// the interpreter's bounds allow (`MAX_NESTING`, `MAX_REENTRY`, and the
/// depth bounds of comparison, `repr`, JSON and conversion), which the
/// tests run on threads of 2 MiB, in unoptimized builds too.
pub const STACK_BYTES: usize = 4 << 20;

/// The most finished executions' stacks kept for the next ones.
const SPARE_STACKS: usize = 32;

/// Stacks of finished executions, kept: a new one costs two system calls
/// and a page fault per page touched.
static STACKS: Mutex<Vec<DefaultStack>> = Mutex::new(Vec::new());

fn spare_stacks() -> std::sync::MutexGuard<'static, Vec<DefaultStack>> {
    // A panic cannot leave the list inconsistent: it changes by one push
    // or pop.
    STACKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A capability call the program is waiting on.
#[derive(Debug, Clone, PartialEq)]
pub struct CapabilityCall {
    /// The dotted name, e.g. `records.lookup`.
    pub name: String,
    /// The keyword arguments in call order (`None` arguments are `Null`).
    pub args: Vec<(String, Data)>,
}

/// What an execution did when it stopped.
#[derive(Debug)]
pub enum Step<E> {
    /// It waits for this call's result: resume it with
    /// [`Execution::resume`].
    Call(CapabilityCall),
    /// It ended, with `main`'s converted result or the failure.
    Done(Result<Data, ExecError<E>>),
}

/// What the coroutine is resumed with.
enum Resume {
    Start,
    Reply {
        result: Result<Data, Box<dyn Any + Send>>,
        not_counted: Duration,
    },
    /// Give back the stack's pages below the pause, and stop again.
    Release,
}

/// What the coroutine stops with.
enum Out {
    Call(CapabilityCall),
    /// The stack's pages below the pause were given back.
    Released,
}

type Fiber<E> = Coroutine<Resume, Out, Result<Data, ExecError<E>>, DefaultStack>;

/// Where an execution is.
enum State<E> {
    /// Made, not run yet.
    Ready(Fiber<E>),
    /// Stopped at a capability call.
    Paused(Fiber<E>),
    /// Refused before it ran (its source is too long, or no stack could
    /// be had): the first step ends it.
    Refused(LimitKind),
    /// Ended, or running (between taking the state and putting it back).
    Over,
}

/// One program in progress (see the module's documentation). `E` is the
/// host's error, handed back unchanged in [`ExecError::Host`].
pub struct Execution<'a, E> {
    state: State<E>,
    /// The lowest and the end address of the coroutine's stack (both 0
    /// when it has none).
    stack: (usize, usize),
    /// The coroutine may borrow for `'a` (see [`Execution::new`]).
    _borrows: PhantomData<&'a ()>,
}

// SAFETY: the coroutine's stack holds only what the program made on it —
// its arena, values, budget, interpreter state, the Rust frames of the
// builtins it is in — all reachable from that stack alone, plus what
// `Execution::with_heap_total` moved in, all of it `Send` by its bounds
// (the source and the capability tree or borrows of them, the limits,
// the cancellation flag, the heap total). What crosses the stack's edge
// is `Send`: calls out (`Data`), replies in (`Data` or a
// `Box<dyn Any + Send>`), the result (`Data` or an `ExecError<E>`, `E:
// Send`). The crate's thread-local caches
// (`args::Items`' spare vector, `format`'s text buffer) are taken out of
// the thread-local as owned, empty-or-cleared buffers and put back
// whole, never borrowed across a call to the host, and the arena pool is
// behind a mutex. So moving the whole coroutine between threads, between
// two steps, is moving values that nothing else can see.
unsafe impl<E: Send> Send for Execution<'_, E> {}

/// The host of a paused execution: each call leaves the coroutine and
/// comes back with its result.
struct Pausing<'y> {
    yielder: &'y Yielder<Resume, Out>,
    not_counted: Cell<Duration>,
    /// The lowest address of the coroutine's stack.
    stack_limit: usize,
    /// The execution's values, whose spare arena a release gives back.
    space: &'y Space,
}

impl DynHost for Pausing<'_> {
    fn call(&self, name: &str, args: Vec<(String, Data)>) -> Result<Data, Box<dyn Any + Send>> {
        let mut out = Out::Call(CapabilityCall {
            name: name.to_string(),
            args,
        });
        loop {
            match self.yielder.suspend(out) {
                Resume::Reply {
                    result,
                    not_counted,
                } => {
                    self.not_counted.set(not_counted);
                    return result;
                }
                Resume::Release => {
                    release_stack_below_here(self.stack_limit);
                    self.space.release_spare();
                    out = Out::Released;
                }
                // `Execution` resumes a paused coroutine only with a reply
                // or a release.
                Resume::Start => return Err(Box::new(MisusedResume)),
            }
        }
    }

    fn take_paused(&self) -> Duration {
        self.not_counted.replace(Duration::ZERO)
    }
}

/// A coroutine resumed without a reply (cannot happen through
/// [`Execution`]'s API); it fails the execution as an internal error.
struct MisusedResume;

/// Gives back to the system the pages of the running stack that lie
/// wholly below its stack pointer (and above `limit`, the stack's lowest
/// address): nothing below the stack pointer is in use, so they read as
/// zeros if they are touched again. The stack pointer is read and the
/// system call (`madvise(MADV_DONTNEED)`) made in one block of assembly
/// that itself uses no stack, so no frame of its own lies in the pages it
/// gives back (a call to the C library's wrapper would push one). The
/// page of the stack pointer, and 128 bytes below it, are kept. Only on
/// x86-64 Linux, where pages are 4 KiB; elsewhere it does nothing.
#[inline(always)]
fn release_stack_below_here(limit: usize) {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    // SAFETY: the range given back lies below the stack pointer of the
    // frame running this block (less the 128 bytes of the red zone,
    // rounded down to a page), which no frame uses, and at or above the
    // stack's lowest address; the block pushes nothing, and preserves
    // every register but those it names. The system call's result is not
    // needed: on failure nothing is given back.
    unsafe {
        std::arch::asm!(
            "lea {end}, [rsp - 128]",
            "and {end}, -4096",
            "mov rsi, {end}",
            "sub rsi, rdi",
            "jbe 2f",
            "mov eax, 28",
            "mov edx, 4",
            "syscall",
            "2:",
            end = out(reg) _,
            in("rdi") limit,
            out("rax") _,
            out("rsi") _,
            out("rdx") _,
            out("rcx") _,
            out("r11") _,
            options(nostack),
        );
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    let _ = limit;
}

impl<'a, E: Send + 'static> Execution<'a, E> {
    /// An execution of `source` with the capabilities of `capabilities`,
    /// under `limits`; `cancel`, when raised, stops it at its next check.
    /// `source` and `capabilities` are moved into the execution: borrows
    /// (`&str`, `&Capabilities`) for an execution that lives within them,
    /// owners (`Arc<str>`, `Arc<Capabilities>`) for one that must not
    /// borrow (`'static`, to hand to another task or thread). The time
    /// limit runs from now. Nothing runs until the first
    /// [`Execution::resume`].
    pub fn new<S, C>(
        source: S,
        capabilities: C,
        limits: Limits,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Execution<'a, E>
    where
        S: AsRef<str> + Send + 'a,
        C: Borrow<Capabilities> + Send + 'a,
    {
        Execution::with_heap_total(source, capabilities, limits, cancel, None)
    }

    /// [`Execution::new`], its heap also counted in `total` (see
    /// [`HeapTotal`]).
    pub fn with_heap_total<S, C>(
        source: S,
        capabilities: C,
        limits: Limits,
        cancel: Option<Arc<AtomicBool>>,
        total: Option<Arc<HeapTotal>>,
    ) -> Execution<'a, E>
    where
        S: AsRef<str> + Send + 'a,
        C: Borrow<Capabilities> + Send + 'a,
    {
        let start = Instant::now();
        let mut stack_range = (0, 0);
        let state = if source.as_ref().len() > limits.max_source_bytes {
            State::Refused(LimitKind::SourceBytes)
        } else {
            match take_stack() {
                Some(stack) => {
                    let stack_limit = corosensei::stack::Stack::limit(&stack).get();
                    stack_range = (stack_limit, corosensei::stack::Stack::base(&stack).get());
                    let body = move |yielder: &Yielder<Resume, Out>, _: Resume| {
                        let source = source.as_ref();
                        // A kept arena when there is one: memory already
                        // touched (see `arena_pool`).
                        let bump = POOL.take(arena_capacity(source.len()));
                        let space = Space::new(POOL.take_bump(SPACE_CAPACITY));
                        let mut budget = Budget::new(limits, start, cancel);
                        if let Some(total) = total {
                            budget = budget.with_total(total);
                        }
                        let host = Pausing {
                            yielder,
                            not_counted: Cell::new(Duration::ZERO),
                            stack_limit,
                            space: &space,
                        };
                        run(source, capabilities.borrow(), &host, &bump, &space, &budget)
                            .map_err(|e| classify::<E>(e, source))
                    };
                    // SAFETY: whatever the body borrows it borrows for
                    // `'a` (the bounds on `S` and `C`), and the coroutine
                    // lives in an `Execution<'a, _>`, which cannot outlive
                    // `'a`; dropping it unwinds the coroutine's stack (or
                    // the coroutine already ended), and one that is leaked
                    // is never resumed again, so no borrow is used past
                    // `'a`.
                    State::Ready(unsafe { Coroutine::with_stack_unchecked(stack, body) })
                }
                // No stack could be mapped: the process is out of memory.
                None => State::Refused(LimitKind::HeapBytes),
            }
        };
        Execution {
            state,
            stack: stack_range,
            _borrows: PhantomData,
        }
    }

    /// Runs the program from where it is until it calls a capability or
    /// ends. `reply` answers the call it stopped at: the call's result or
    /// the host's error, and the time the host spent on it that the time
    /// limit must not count (a person's approval), which moves the
    /// deadline out. The first step takes no reply (`None`), every later
    /// one takes one; a step that breaks that rule, or one after the end,
    /// ends the execution as an internal error.
    pub fn resume(&mut self, reply: Option<(Result<Data, E>, Duration)>) -> Step<E> {
        let state = std::mem::replace(&mut self.state, State::Over);
        let (mut fiber, input) = match (state, reply) {
            (State::Ready(fiber), None) => (fiber, Resume::Start),
            (State::Paused(fiber), Some((result, not_counted))) => (
                fiber,
                Resume::Reply {
                    result: result.map_err(|e| Box::new(e) as Box<dyn Any + Send>),
                    not_counted,
                },
            ),
            (State::Refused(kind), None) => return Step::Done(Err(ExecError::ResourceLimit(kind))),
            (State::Over, _) => return internal("resumed after its end"),
            (State::Ready(_) | State::Refused(_), Some(_)) => {
                return internal("a reply before the first step")
            }
            (State::Paused(_), None) => return internal("resumed without a reply"),
        };
        match fiber.resume(input) {
            CoroutineResult::Yield(Out::Call(call)) => {
                self.state = State::Paused(fiber);
                Step::Call(call)
            }
            // A release is answered only to `release_stack`.
            CoroutineResult::Yield(Out::Released) => internal("released when resumed"),
            CoroutineResult::Return(result) => {
                keep_stack(fiber.into_stack());
                Step::Done(result)
            }
        }
    }

    /// Gives back the pages of a paused execution's stack below where it
    /// stopped: what the front end and deeper calls touched, and all but
    /// the pages that hold its frames now; and the arena its heap kept
    /// for the next collection to copy into (see [`crate::gc::Space`]).
    /// For a host that is about to wait on the call (a page of stack is a large part of what a
    /// waiting program holds), not for one that answers at once: it
    /// costs a system call, and the pages are faulted in again if the
    /// program goes as deep once more. Does nothing unless the execution
    /// is paused.
    pub fn release_stack(&mut self) {
        let State::Paused(mut fiber) = std::mem::replace(&mut self.state, State::Over) else {
            return;
        };
        match fiber.resume(Resume::Release) {
            CoroutineResult::Yield(Out::Released) => self.state = State::Paused(fiber),
            // The coroutine answers a release only by stopping again at
            // the same call (`Pausing::call`); anything else ends the
            // execution, as an internal error at its next step.
            CoroutineResult::Yield(Out::Call(_)) => drop(fiber),
            CoroutineResult::Return(_) => keep_stack(fiber.into_stack()),
        }
    }

    /// The bytes of a paused execution's stack that are resident now
    /// (`mincore`), for tests and diagnostics; `None` when it is not
    /// paused or the system cannot tell.
    pub fn resident_stack_bytes(&self) -> Option<usize> {
        if !self.is_paused() {
            return None;
        }
        resident_bytes(self.stack.0, self.stack.1)
    }

    /// Whether the execution has stopped at a capability call.
    pub fn is_paused(&self) -> bool {
        matches!(self.state, State::Paused(_))
    }
}

impl<E> Drop for Execution<'_, E> {
    /// A paused execution's stack is unwound (its arena and everything
    /// else it holds are given back now) and kept for the next one.
    fn drop(&mut self) {
        if let State::Paused(mut fiber) = std::mem::replace(&mut self.state, State::Over) {
            fiber.force_unwind();
            keep_stack(fiber.into_stack());
        }
    }
}

fn internal<E>(what: &str) -> Step<E> {
    Step::Done(Err(ExecError::InvalidProgram(format!(
        "internal error: execution {what}"
    ))))
}

/// The resident bytes of the pages from `start` to `end` (page-aligned).
#[cfg(target_os = "linux")]
fn resident_bytes(start: usize, end: usize) -> Option<usize> {
    const PAGE: usize = 4096;
    let mut pages = vec![0u8; (end - start) / PAGE];
    // SAFETY: `start..end` is a mapping of this process (a stack the
    // execution owns), page-aligned, and `pages` has a byte per page.
    let r = unsafe { libc::mincore(start as *mut libc::c_void, end - start, pages.as_mut_ptr()) };
    (r == 0).then(|| pages.iter().filter(|&&p| p & 1 == 1).count() * PAGE)
}

#[cfg(not(target_os = "linux"))]
fn resident_bytes(_: usize, _: usize) -> Option<usize> {
    None
}

/// A kept stack, or a new one (`None` when none can be mapped).
fn take_stack() -> Option<DefaultStack> {
    let kept = spare_stacks().pop();
    kept.or_else(|| DefaultStack::new(STACK_BYTES).ok())
}

/// Keeps the stack of a finished execution for the next one, when fewer
/// than [`SPARE_STACKS`] are kept.
fn keep_stack(stack: DefaultStack) {
    let mut spare = spare_stacks();
    if spare.len() < SPARE_STACKS {
        spare.push(stack);
    }
}
