//! codemode-vm: the compiler and interpreter of the Starlark surface.
//!
//! [`execute`] takes source text, the capability names the host serves, a
//! [`Host`] and [`Limits`], and runs the program: parse and resolve
//! (`codemode-lang`), compile to register bytecode ([`compile`]), run the
//! top level, freeze the globals, call `main`, and convert its result to
//! [`Data`]. All values of one execution live in one arena ([`heap`]),
//! every budget is in [`budget::Budget`], and every failure is classified
//! as an [`ExecError`].

pub mod budget;
pub mod builtins;
pub mod capabilities;
pub mod compile;
pub mod data;
pub mod dict;
pub mod error;
pub mod exec;
pub mod format;
pub mod hash;
pub mod heap;
pub mod interp;
pub mod opcode;
pub mod ops;
pub mod value;
pub mod verify;

pub use budget::Limits;
pub use capabilities::Capabilities;
pub use codemode_lang::KEYWORDS;
pub use data::Data;
pub use error::LimitKind;
pub use exec::{disassemble, execute, execute_with, source_from_bytes, ExecError, Host, HostCall};
