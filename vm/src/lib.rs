//! codemode-vm: the compiler and interpreter of the Starlark surface.
//!
//! [`execute`] takes source text, the capability names the host serves, a
//! [`Host`] and [`Limits`], and runs the program: parse and resolve
//! (`codemode-lang`), compile to register bytecode, run the top level,
//! freeze the globals, call `main`, and convert its result to [`Data`].
//! All values of one execution live in one arena, every budget is counted
//! against the [`Limits`], and every failure is classified as an
//! [`ExecError`].
//!
//! The public API is what this file re-exports: [`execute`] and
//! [`execute_with`] (with a [`Capabilities`] tree built once per catalog),
//! [`disassemble`] for tests of the compiler, [`source_from_bytes`] for
//! programs that arrive as bytes, the boundary type [`Data`], and the names
//! a program cannot bind ([`UNIVERSE_NAMES`], [`KEYWORDS`]). Every module
//! is private to the crate.

pub(crate) mod arena_pool;
pub(crate) mod budget;
pub(crate) mod builtins;
pub(crate) mod capabilities;
pub(crate) mod compile;
pub(crate) mod data;
pub(crate) mod dict;
pub(crate) mod error;
pub(crate) mod exec;
#[cfg(not(miri))]
pub(crate) mod execution;
pub(crate) mod format;
pub(crate) mod gc;
pub(crate) mod hash;
pub(crate) mod heap;
pub(crate) mod interp;
pub(crate) mod large;
pub(crate) mod opcode;
pub(crate) mod ops;
pub(crate) mod template;
pub(crate) mod text;
pub(crate) mod value;
pub(crate) mod verify;

pub use budget::{HeapTotal, Limits, HEAP_TOTAL_BLOCK};
pub use builtins::UNIVERSE_NAMES;
pub use capabilities::Capabilities;
pub use codemode_lang::{without_hint, Hint, KEYWORDS};
pub use data::Data;
pub use error::LimitKind;
pub use exec::{disassemble, execute, execute_with, source_from_bytes, ExecError, Host, HostCall};
#[cfg(not(miri))]
pub use execution::{CapabilityCall, Execution, Step, STACK_BYTES};
pub use gc::collections_on_this_thread;
