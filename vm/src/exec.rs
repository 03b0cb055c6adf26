//! The entry point: run one program against a host under limits.
//!
//! [`execute`] checks the source length, parses and resolves it, compiles
//! it, runs the top level (where capability calls are refused), freezes the
//! globals, calls `main` (a `def` with no parameters at all) and converts
//! its result to [`Data`]. Every failure comes out as an [`ExecError`]:
//! invalid program (with a rendered `<codemode>:LINE:COL:` position when
//! there is one), invalid capability arguments, a resource limit,
//! cancellation, or the host's own error, unchanged.

#[cfg(miri)]
use crate::arena_pool::POOL;
use crate::budget::{Budget, Limits};
use crate::builtins;
use crate::capabilities::Capabilities;
use crate::compile::compile_module;
use crate::data::{self, ConvertError, Data};
use crate::error::{Error, ErrorKind, LimitKind};
#[cfg(not(miri))]
use crate::execution::{Execution, Step};
use crate::gc::Space;
use crate::heap::Heap;
use crate::interp::{DynHost, Thread};
use crate::opcode::Code;
use crate::value::*;
use bumpalo::Bump;
use codemode_lang::{LineIndex, Names, FILE_NAME};
use rustc_hash::FxHashSet;
#[cfg(miri)]
use std::any::Any;
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// One capability call as the host receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCall<'a> {
    /// The dotted name, e.g. `records.lookup`.
    pub name: &'a str,
    /// The keyword arguments in call order (`None` arguments are `Null`).
    pub args: Vec<(String, Data)>,
}

/// What serves capability calls.
pub trait Host {
    /// The host's failure, handed back unchanged by [`execute`].
    type Error: Send + 'static;

    fn call(&self, call: HostCall<'_>) -> Result<Data, Self::Error>;

    /// The time the last call spent waiting for something that must not
    /// count against the time limit (a person's approval); the deadline
    /// moves out by that much. Asked once after every call.
    fn take_paused(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

/// Why an execution failed.
#[derive(Debug, PartialEq)]
pub enum ExecError<E> {
    /// The program is invalid: syntax, resolution, a runtime error, a bad
    /// entry point or an unconvertible result. The detail is
    /// `<codemode>:LINE:COL: message` when there is a position, followed by
    /// ` (hint: TEXT)` when a Python habit caused the error
    /// ([`crate::without_hint`] gives starlark-go's message back).
    InvalidProgram(String),
    /// A capability call could not be bound.
    InvalidArguments(String),
    /// A budget was exceeded.
    ResourceLimit(LimitKind),
    /// The cancellation flag was raised.
    Cancelled,
    /// The host failed a capability call.
    Host(E),
}

impl<E> fmt::Display for ExecError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::InvalidProgram(d) => write!(f, "invalid program: {d}"),
            ExecError::InvalidArguments(d) => write!(f, "invalid capability arguments: {d}"),
            ExecError::ResourceLimit(_) => write!(f, "resource limit exceeded"),
            ExecError::Cancelled => write!(f, "context canceled"),
            ExecError::Host(_) => write!(f, "capability failed"),
        }
    }
}

/// Runs `source` with the capabilities named in `capabilities` (dotted
/// names) served by `host`. `cancel`, when raised, stops the program.
/// (Builds the capability tree for this one run: a host that runs many
/// programs over the same capabilities builds [`Capabilities`] once and
/// calls [`execute_with`].)
pub fn execute<H: Host>(
    source: &str,
    capabilities: &[&str],
    host: &H,
    limits: &Limits,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<Data, ExecError<H::Error>> {
    let capabilities = Capabilities::new(capabilities.iter().copied());
    execute_with(source, &capabilities, host, limits, cancel)
}

/// [`execute`] over a capability tree built in advance: an [`Execution`]
/// run step by step, each capability call it stops at answered by `host`
/// on this thread.
#[cfg(not(miri))]
pub fn execute_with<H: Host>(
    source: &str,
    capabilities: &Capabilities,
    host: &H,
    limits: &Limits,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<Data, ExecError<H::Error>> {
    let mut execution = Execution::new(source, capabilities, limits.clone(), cancel);
    let mut step = execution.resume(None);
    loop {
        match step {
            Step::Done(result) => return result,
            Step::Call(call) => {
                let result = host.call(HostCall {
                    name: &call.name,
                    args: call.args,
                });
                step = execution.resume(Some((result, host.take_paused())));
            }
        }
    }
}

/// [`execute`] over a capability tree built in advance. (Under Miri,
/// which cannot switch stacks, the program runs on this thread's stack
/// and calls the host directly.)
#[cfg(miri)]
pub fn execute_with<H: Host>(
    source: &str,
    capabilities: &Capabilities,
    host: &H,
    limits: &Limits,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<Data, ExecError<H::Error>> {
    struct Direct<'a, H: Host>(&'a H);

    impl<H: Host> DynHost for Direct<'_, H> {
        fn call(&self, name: &str, args: Vec<(String, Data)>) -> Result<Data, Box<dyn Any + Send>> {
            self.0
                .call(HostCall { name, args })
                .map_err(|e| Box::new(e) as Box<dyn Any + Send>)
        }

        fn take_paused(&self) -> std::time::Duration {
            self.0.take_paused()
        }
    }

    let start = Instant::now();
    if source.len() > limits.max_source_bytes {
        return Err(ExecError::ResourceLimit(LimitKind::SourceBytes));
    }
    let bump = POOL.take(arena_capacity(source.len()));
    let space = Space::new(POOL.take_bump(SPACE_CAPACITY));
    let budget = Budget::new(limits.clone(), start, cancel);
    run(source, capabilities, &Direct(host), &bump, &space, &budget)
        .map_err(|e| classify::<H::Error>(e, source))
}

/// The arena's first chunk for a program of `len` bytes: room for its
/// syntax tree and code (the programs of `benches/programs` take 23–52
/// bytes per byte of source, the short ones the most, and bumpalo rounds
/// a chunk up to whole pages), so that most executions never grow the
/// arena, and no more: the values live in the space, and a waiting
/// program holds every page of the chunk that was touched. Capped, since
/// the arena only takes what the heap budget has already charged.
pub(crate) fn arena_capacity(len: usize) -> usize {
    const BASE: usize = 2 * 1024;
    const MAX: usize = 2 * 1024 * 1024;
    len.saturating_mul(32).saturating_add(BASE).min(MAX)
}

/// The first chunk of a new space (values): one page with bumpalo's
/// footer and the allocator's own bytes. A waiting program that has made
/// few values then holds one page of them: a larger first chunk is
/// touched at both ends (its top by the values, its start by the
/// allocator, which keeps its free list in the blocks it frees), and an
/// execution that makes more grows the space by doubling chunks.
pub(crate) const SPACE_CAPACITY: usize = 3 << 10;

/// Runs `source`: its syntax tree and code in `bump`, its values in
/// `space` (which collections replace).
///
/// The front end, the compiler and the run are separate functions, so
/// that what the first two need (the capability tree's names and values)
/// is freed before the program runs: a program paused at a capability
/// call holds only what its run needs.
pub(crate) fn run<'h>(
    source: &'h str,
    capabilities: &'h Capabilities,
    host: &'h dyn DynHost,
    bump: &'h Bump,
    space: &'h Space,
    budget: &'h Budget,
) -> Result<Data, Error> {
    let module = front_end(source, capabilities, bump)?;
    budget.check_time()?;
    let (code, global_names) = compile(module, capabilities, bump, budget)?;
    run_main(code, global_names, host, space, budget)
}

/// Parses and resolves `source` into `bump`. Not inlined, nor are
/// [`compile`] and [`run_main`]: each one's locals take stack only while
/// it runs, so that a program paused at a capability call (in
/// `run_main`) is not as deep as the front end's frame too (1.7 KiB when
/// the three were one frame): its stack's first page holds it.
#[inline(never)]
fn front_end<'h>(
    source: &'h str,
    capabilities: &Capabilities,
    bump: &'h Bump,
) -> Result<&'h codemode_lang::ast::Module<'h>, Error> {
    let root_names = capabilities.root_names();
    let names = Names {
        predeclared: &root_names,
        universal: builtins::UNIVERSE_NAMES,
    };
    let module = codemode_lang::check(bump, source, &names).map_err(|d| {
        let error = match d.hint {
            Some(hint) => Error::hinted(d.message, hint),
            None => Error::msg(d.message),
        };
        error.at(d.pos)
    })?;
    Ok(module)
}

/// Compiles `module` into `bump`: its code and its global names.
#[inline(never)]
fn compile<'h>(
    module: &'h codemode_lang::ast::Module<'h>,
    capabilities: &'h Capabilities,
    bump: &'h Bump,
    budget: &'h Budget,
) -> Result<(&'h Code<'h>, &'h [&'h str]), Error> {
    let heap = Heap::new(bump, budget);
    let roots = capabilities.root_values();
    let (_, universe_values) = builtins::universe();
    let code = compile_module(heap, module, &roots, &universe_values[..])?;
    let global_names: &'h [&'h str] = module.globals.get().copied().unwrap_or(&[]);
    Ok((code, global_names))
}

/// Runs the module's top level, then `main`, and converts its result.
#[inline(never)]
fn run_main<'h>(
    code: &'h Code<'h>,
    global_names: &'h [&'h str],
    host: &'h dyn DynHost,
    space: &'h Space,
    budget: &'h Budget,
) -> Result<Data, Error> {
    let mut thread = Thread::new(space, budget, global_names, host);
    thread.run_toplevel(code)?;
    freeze(&thread.globals);
    let main = global_names
        .iter()
        .position(|n| *n == "main")
        .map(|i| thread.globals[i]);
    let main = match main {
        Some(Value::Function(f)) if f.code.params.nslots() == 0 => Value::Function(f),
        Some(Value::Function(_)) => {
            return Err(Error::msg("main must be a function with no parameters"))
        }
        Some(Value::Unbound) | None => return Err(Error::msg("program does not define main")),
        Some(_) => return Err(Error::msg("main must be a function with no parameters")),
    };
    thread.allow_native = true;
    let result = thread.call(main, &[], &[])?;
    let limits = &budget.limits;
    let (data, len) = data::to_data(
        result,
        limits.max_value_depth,
        limits.max_value_bytes,
        budget,
    )
    .map_err(|e| match e {
        ConvertError::Depth => Error::limit(LimitKind::ValueDepth),
        ConvertError::Bytes => Error::limit(LimitKind::ValueBytes),
        ConvertError::Unsupported(m) => Error::msg(format!("main returned an invalid result: {m}")),
        ConvertError::Time(e) => e,
    })?;
    debug_assert!(len <= limits.max_value_bytes);
    budget.check_time()?;
    Ok(data)
}

/// Compiles `source` against the universe and the capabilities named in
/// `capabilities`, and returns the disassembly of its code (the top level,
/// then every function). Errors come back rendered, as `execute` reports
/// them.
pub fn disassemble(source: &str, capabilities: &[&str]) -> Result<String, String> {
    let bump = Bump::new();
    let budget = Budget::new(Limits::default(), Instant::now(), None);
    let render = |e: Error| classify::<()>(e, source).to_string();
    let capabilities = Capabilities::new(capabilities.iter().copied());
    let module = front_end(source, &capabilities, &bump).map_err(render)?;
    let (code, _) = compile(module, &capabilities, &bump, &budget).map_err(render)?;
    Ok(code.disassemble())
}

/// The text of a program that arrived as bytes, judged as [`execute`]
/// judges its source: bytes that are not UTF-8 are an invalid program at
/// the first offending byte, and the error is that `invalid program`
/// detail (`<codemode>:L:C: invalid UTF-8 encoding`).
pub fn source_from_bytes(bytes: &[u8]) -> Result<&str, String> {
    codemode_lang::source_from_bytes(bytes).map_err(|diagnostic| {
        // Positions are counted in the valid text before the offending byte.
        let valid = bytes.get(..diagnostic.pos as usize).unwrap_or_default();
        diagnostic.render(std::str::from_utf8(valid).unwrap_or_default())
    })
}

/// Freezes everything reachable from the globals.
fn freeze(globals: &[Value<'_>]) {
    let mut stack: Vec<Value<'_>> = globals.to_vec();
    let mut seen: FxHashSet<usize> = FxHashSet::default();
    while let Some(v) = stack.pop() {
        // Each arm's guard marks the value as visited (frozen, or seen), so
        // shared and cyclic structures are walked once.
        match v {
            Value::List(l) if !l.frozen.replace(true) => {
                stack.extend(l.items.borrow().iter().copied());
            }
            Value::Dict(d) if !d.frozen.replace(true) => {
                for (k, x) in d.map.borrow().iter() {
                    stack.push(k);
                    stack.push(x);
                }
            }
            Value::Tuple(t) if seen.insert(t as *const _ as usize) => {
                stack.extend(t.items.iter().copied());
            }
            Value::Function(f) if seen.insert(f as *const _ as usize) => {
                stack.extend(f.defaults.iter().copied());
                stack.extend(f.freevars.iter().map(|c| Value::Cell(c)));
            }
            Value::Cell(c) if seen.insert(c as *const _ as usize) => {
                stack.push(c.value.get());
            }
            Value::BoundMethod(m) => stack.push(m.receiver),
            _ => {}
        }
    }
}

pub(crate) fn classify<E: 'static>(e: Error, source: &str) -> ExecError<E> {
    match e.into_kind() {
        ErrorKind::Eval { msg, pos, hint } => {
            let hint = hint.map(|h| h.to_string()).unwrap_or_default();
            ExecError::InvalidProgram(match pos {
                Some(p) => {
                    let (line, col) = LineIndex::new(source).line_col(p);
                    format!("{FILE_NAME}:{line}:{col}: {msg}{hint}")
                }
                None => format!("{msg}{hint}"),
            })
        }
        ErrorKind::Limit(k) => ExecError::ResourceLimit(k),
        ErrorKind::Cancelled => ExecError::Cancelled,
        ErrorKind::InvalidArguments(m) => ExecError::InvalidArguments(m),
        ErrorKind::Host(b) => match b.downcast::<E>() {
            Ok(e) => ExecError::Host(*e),
            Err(_) => ExecError::InvalidProgram("internal error: foreign host error".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of `bump`'s allocations.
    fn used(bump: &Bump) -> usize {
        // SAFETY: nothing allocates in `bump` while its chunks are listed.
        unsafe { bump.iter_allocated_chunks_raw() }
            .map(|(_, len)| len)
            .sum()
    }

    /// A new space's first chunk, and a short program's arena, are one
    /// and two pages, allocator bytes and bumpalo's footer included:
    /// every page of them that a waiting program touched stays resident
    /// (see [`SPACE_CAPACITY`] and [`arena_capacity`]).
    #[test]
    fn a_short_program_starts_in_three_pages() {
        let space = Bump::with_capacity(SPACE_CAPACITY);
        assert!(space.allocated_bytes_including_metadata() <= 4096);
        let arena = Bump::with_capacity(arena_capacity(120));
        assert!(arena.allocated_bytes_including_metadata() <= 2 * 4096);
    }

    struct NoCalls;

    impl DynHost for NoCalls {
        fn call(
            &self,
            _: &str,
            _: Vec<(String, Data)>,
        ) -> std::result::Result<Data, Box<dyn std::any::Any + Send>> {
            Err(Box::new("no capabilities"))
        }

        fn take_paused(&self) -> std::time::Duration {
            std::time::Duration::ZERO
        }
    }

    /// The sizes of the chunks a program's values took, after running it.
    fn space_chunks(source: &str) -> (Data, Vec<usize>) {
        let (bump, space) = (Bump::new(), Space::new(Bump::with_capacity(SPACE_CAPACITY)));
        let budget = Budget::new(Limits::default(), Instant::now(), None);
        let caps = Capabilities::new(std::iter::empty::<&str>());
        let result = run(source, &caps, &NoCalls, &bump, &space, &budget).expect("it runs");
        // SAFETY: nothing allocates in the space while its chunks are
        // listed.
        let chunks = unsafe { space.bump().iter_allocated_chunks_raw() }
            .map(|(_, len)| len)
            .collect();
        (result, chunks)
    }

    /// Past [`crate::budget::WIDEN_AT`] the space's next chunk is a large
    /// one, not the next double of its small ones (all in 4 KiB pages up
    /// to 1 MiB); a program that allocates less keeps small chunks.
    #[test]
    fn a_program_that_allocates_megabytes_gets_large_chunks_early() {
        let program = |n: usize| {
            format!(
                "def main():\n    rows = []\n    for i in range({n}):\n        \
                 rows.append({{\"id\": i, \"name\": \"row-\" + str(i)}})\n    \
                 return len(rows)\n"
            )
        };
        let (result, chunks) = space_chunks(&program(20_000));
        assert_eq!(result, Data::Int(20_000));
        // The bytes written in chunks below 1 MiB (the block that makes
        // the next chunk large is 1 MiB, and never written): about
        // `WIDEN_AT`; without the widening, 2 MiB (chunks of 3 KiB to
        // 1 MiB, doubling).
        let wide = crate::gc::WIDE_CHUNK;
        let small: usize = chunks.iter().filter(|&&c| c < wide / 2 - 4096).sum();
        assert!(chunks.iter().any(|&c| c >= wide - 4096), "{chunks:?}");
        assert!(
            small <= 2 * crate::budget::WIDEN_AT,
            "{small} bytes in small chunks: {chunks:?}"
        );
        let (result, chunks) = space_chunks(&program(1_000));
        assert_eq!(result, Data::Int(1_000));
        assert!(
            chunks.iter().all(|&c| c < crate::budget::WIDEN_AT),
            "{chunks:?}"
        );
    }

    /// A paused execution keeps its program's syntax tree and code, so
    /// that memory is a part of what every waiting program holds: a
    /// small program's code takes a few KiB, not what a large function's
    /// vectors start with (7.7 KiB for this one when each function's
    /// vectors started at 64 instructions and 16 call sites).
    #[test]
    fn a_small_program_compiles_into_little_memory() {
        let source = "def main():\n    total = 0\n    for i in range(4):\n        \
                      item = api.get_item(id=i)\n        total += item[\"value\"]\n    \
                      return {\"total\": total}\n";
        let bump = Bump::new();
        let budget = Budget::new(Limits::default(), Instant::now(), None);
        let capabilities = Capabilities::new(["api.get_item"]);
        let module = front_end(source, &capabilities, &bump).expect("a valid program");
        let tree = used(&bump);
        compile(module, &capabilities, &bump, &budget).expect("it compiles");
        let code = used(&bump) - tree;
        assert!(code <= 3 << 10, "{code} bytes of code");
    }
}
